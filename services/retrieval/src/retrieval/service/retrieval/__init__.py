"""Retrieval: the service and its pipeline of stages."""

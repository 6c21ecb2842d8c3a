"""Answers written by a chat model from retrieved context, citing its chunks."""

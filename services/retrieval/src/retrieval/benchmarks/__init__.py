"""Benchmarks that measure the service on the configured backends and report figures."""

"""Prometheus metrics and OpenTelemetry traces of every call and stage."""

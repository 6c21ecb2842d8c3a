"""Benchmarks of the retrieval service on the configured backends: figures printed and
written to ``reports/``, and ``docs/benchmarks.md`` written from them."""

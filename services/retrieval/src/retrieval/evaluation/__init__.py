"""Accuracy of retrieval: ranking metrics, the golden suite and external benchmarks (BEIR)."""

"""Accuracy of retrieval: ranking metrics, percentiles, the golden suite and its ablation."""

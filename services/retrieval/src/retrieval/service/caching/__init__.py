"""Port decorators that keep what was read or computed: embeddings, query vectors, chunk texts,
results and extractions."""

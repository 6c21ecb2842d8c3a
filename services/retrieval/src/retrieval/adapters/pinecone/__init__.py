"""Pinecone adapters: the dense and sparse indexes, Inference embeddings and rerank, with the
limits, errors and freshness they share."""

"""The embedded indexes, in process with Pinecone's semantics, persisted to disk: vectors (exact,
and through an HNSW graph above a size) and BM25 keywords."""

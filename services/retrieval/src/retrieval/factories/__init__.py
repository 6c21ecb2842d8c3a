"""The functions the container builds adapters with, from settings, one module per
technology. Each imports its adapter when it is called, so that a command loads the
libraries of the backends it is configured with and no others (Pinecone's SDK when
embedded; faiss, bm25s and the local model when on Pinecone)."""

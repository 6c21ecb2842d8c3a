"""The knowledge base as the retriever of an agent framework, each an optional extra:
``retrieval.integrations.langchain`` (``retrieval-service[langchain]``) and
``retrieval.integrations.llamaindex`` (``retrieval-service[llamaindex]``). Importing this
package imports neither framework."""

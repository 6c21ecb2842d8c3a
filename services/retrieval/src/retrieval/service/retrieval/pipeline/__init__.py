"""Retrieval as a list of stages over one state; the container composes the list."""

from retrieval.domain.search_plan import SearchPlan
from retrieval.ports import ChunkRepository, Embedder, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.ports.graph_store import GraphStore
from retrieval.ports.llm import Llm
from retrieval.ports.reranker import Reranker
from retrieval.service.retrieval.current_versions import CurrentVersions
from retrieval.service.retrieval.pipeline.compress import Compress
from retrieval.service.retrieval.pipeline.dense_scores import CompleteDenseScores
from retrieval.service.retrieval.pipeline.diversify import Diversify
from retrieval.service.retrieval.pipeline.fuse import Fuse
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.graph_search import GraphSearch
from retrieval.service.retrieval.pipeline.hydrate import Hydrate
from retrieval.service.retrieval.pipeline.llm_filter import LlmFilter
from retrieval.service.retrieval.pipeline.near_names import NearNames
from retrieval.service.retrieval.pipeline.query import FitQuery
from retrieval.service.retrieval.pipeline.rerank import Rerank
from retrieval.service.retrieval.pipeline.rewrite import Rewriter, RewriteWeakQuery
from retrieval.service.retrieval.pipeline.search import Search
from retrieval.service.retrieval.pipeline.second_hop import SecondHop
from retrieval.service.retrieval.pipeline.stage import Candidate, Pipeline, PipelineState, Stage
from retrieval.service.retrieval.pipeline.texts import CandidateTexts
from retrieval.service.retrieval.pipeline.threshold import ScoreThreshold
from retrieval.service.retrieval.pipeline.widen import Widen


def retrieval_stages(
    embedder: Embedder,
    index: VectorIndex,
    keywords: KeywordIndex,
    chunks: ChunkRepository,
    reranker: Reranker,
    rewriter: Rewriter,
    llm: Llm,
    ledger: DocumentLedger,
    graph: GraphStore,
    entities: EntityExtractor,
    leads: GraphLeads,
) -> tuple[Stage, ...]:
    """Fit the query to the model, search (dense, keyword and graph at once), fuse, follow the names
    the best candidates mention to the documents about them (the second hop), complete the
    dense scores, apply the threshold, rewrite a weak query and do those five again, rerank,
    drop near-copies, drop what the language model judges irrelevant, diversify, fetch the
    texts (a chunk of a version just replaced shows the current one), widen them to their
    neighbouring chunks. ``entities`` reads the names of questions (the rule-based extractor,
    so a retrieval never waits on a chat model); the second hop reads the graph through
    ``leads``, which keeps its candidates' graph records by chunk id and its lookups under
    the namespace generation the call read."""
    texts = CandidateTexts(chunks, CurrentVersions(ledger, chunks))
    graph_search = GraphSearch(graph, entities, NearNames(keywords, chunks))
    search = (
        Search(embedder, index, keywords, graph_search),
        Fuse(),
        SecondHop(leads),
    )
    scoring = (CompleteDenseScores(embedder, index), ScoreThreshold())
    return (
        FitQuery(),
        *search,
        *scoring,
        RewriteWeakQuery(rewriter, search, scoring),
        Rerank(reranker, texts),
        Compress(),
        LlmFilter(llm, texts),
        Diversify(),
        Hydrate(texts),
        Widen(chunks),
    )


__all__ = [
    "Candidate",
    "Pipeline",
    "PipelineState",
    "SearchPlan",
    "Stage",
    "retrieval_stages",
]

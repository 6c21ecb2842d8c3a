"""The switches one retrieval runs with: the service's settings, overridden per request."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from retrieval.domain.models import FusionMethod, RetrievalOptions, SearchMode
from retrieval.errors import InvalidRequestError


@dataclass(frozen=True)
class SearchPlan:
    mode: SearchMode = SearchMode.HYBRID
    fusion: FusionMethod = FusionMethod.DBSF
    dense_weight: float = 1.0
    keyword_weight: float = 1.0
    fetch_k: int = 100
    mmr_lambda: float = 1.0
    max_per_document: int = 0
    rerank: bool = False
    rerank_depth: int = 50
    rrf_k: int = 60
    query_max_words: int = 256
    redundancy_threshold: float = 1.0
    neighbours: int = 0
    rewrite: bool = False
    rewrite_threshold: float = 0.85
    rewrite_attempts: int = 1
    llm_filter: bool = False
    llm_filter_batch: int = 8
    llm_filter_concurrency: int = 2
    second_hop: bool = True
    graph: bool = False
    graph_hops: int = 2
    graph_weight: float = 1.0

    def resolve(self, options: RetrievalOptions) -> SearchPlan:
        """These defaults with every switch the request sets; ``InvalidRequestError`` when a
        hybrid search would weigh both searches 0."""
        chosen = {
            name: value
            for name in REQUEST_SWITCHES
            if (value := getattr(options, name)) is not None
        }
        plan = replace(self, **chosen) if chosen else self
        if plan.mode is SearchMode.HYBRID and plan.dense_weight == plan.keyword_weight == 0:
            raise InvalidRequestError(
                "dense_weight and keyword_weight cannot both be 0 in hybrid mode",
                field="options.keyword_weight",
            )
        return plan

    @property
    def uses_dense(self) -> bool:
        return self.mode is not SearchMode.KEYWORD

    @property
    def uses_keyword(self) -> bool:
        return self.mode is not SearchMode.DENSE

    @property
    def uses_graph(self) -> bool:
        return self.graph and self.mode is SearchMode.HYBRID

    @property
    def diversifies(self) -> bool:
        return self.mmr_lambda < 1.0

    @property
    def compresses(self) -> bool:
        return self.redundancy_threshold < 1.0

    @property
    def compares_vectors(self) -> bool:
        """Whether a stage reads the candidates' stored vectors (MMR, the redundancy filter)."""
        return self.diversifies or self.compresses

    def depth(self, top_k: int) -> int:
        """Candidates each search returns: ``top_k`` when nothing reorders or removes them."""
        if (
            self.mode is SearchMode.HYBRID
            or self.compares_vectors
            or self.max_per_document
            or self.rerank
            or self.llm_filter
        ):
            return max(self.fetch_k, top_k)
        return top_k


REQUEST_SWITCHES = tuple(
    field.name for field in fields(SearchPlan) if field.name in RetrievalOptions.model_fields
)
"""The switches a request may set (``RetrievalOptions``'s fields that are the plan's)."""

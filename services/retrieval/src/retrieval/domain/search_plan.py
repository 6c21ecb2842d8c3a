"""Every search option, declared once with its type, default, bounds and description.

``SearchOptions`` are the options a request may set, ``SearchPlan`` adds those only the
service sets; the plan is the settings' ``search`` group. ``RetrievalOptions``, the request's
overrides, is derived from ``SearchOptions``, and so are the flags of ``retrieval query``
(through ``cli/help_values.py``, written from it by ``make help-values``) and the fields of the
console's query form; a test checks the proto's ``RetrievalOptions`` has a field for each.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, create_model
from pydantic.fields import FieldInfo

from retrieval.domain.frozen import Frozen
from retrieval.domain.ranking.fusion import FusionMethod
from retrieval.errors import InvalidRequestError

MAX_TOP_K = 100
MAX_FETCH_K = 1000

FusionWeight = Annotated[float, Field(ge=0, le=10)]
"""How much one search counts in fusion, 0 to 10."""


class SearchMode(StrEnum):
    """Which searches a retrieval runs."""

    HYBRID = "hybrid"
    DENSE = "dense"
    KEYWORD = "keyword"


class SearchOptions(Frozen):
    """The options a request may set; each title labels it in the console's form."""

    mode: SearchMode = Field(
        default=SearchMode.HYBRID,
        title="Mode",
        description="Searches a retrieval runs: hybrid (dense and keyword, fused), dense or "
        "keyword.",
    )
    fusion: FusionMethod = Field(
        default=FusionMethod.DBSF,
        title="Fusion",
        description="How hybrid results fuse: dbsf, rrf or weighted.",
    )
    dense_weight: FusionWeight = Field(
        default=1.0,
        title="Dense weight",
        description="Weight of the dense search in fusion, 0 to 10.",
    )
    keyword_weight: FusionWeight = Field(
        default=1.0,
        title="Keyword weight",
        description="Weight of the keyword search in fusion, 0 to 10.",
    )
    fetch_k: int = Field(
        default=100,
        ge=1,
        le=MAX_FETCH_K,
        title="Fetch k",
        description="Candidates each search returns before fusion and diversity.",
    )
    mmr_lambda: float = Field(
        default=1.0,
        ge=0,
        le=1,
        title="MMR λ",
        description="Maximal marginal relevance: 1 ranks by relevance alone, lower values "
        "trade relevance for diversity.",
    )
    max_per_document: int = Field(
        default=0,
        ge=0,
        le=MAX_TOP_K,
        title="Max per document",
        description="Most chunks of one document among the matches; 0: no cap.",
    )
    rerank: bool = Field(
        default=False,
        title="Rerank",
        description="Reorder the best candidates with the reranking model.",
    )
    redundancy_threshold: float = Field(
        default=1.0,
        gt=0,
        le=1,
        title="Redundancy",
        description="Drop a candidate whose vector's cosine similarity to a better-ranked "
        "candidate kept is at least this; 1 keeps all.",
    )
    neighbours: int = Field(
        default=0,
        ge=0,
        le=10,
        title="Neighbours",
        description="Widen each match to the chunks up to this many positions either side of "
        "it in its document, as one text; 0: the match alone.",
    )
    rewrite: bool = Field(
        default=False,
        title="Rewrite",
        description="Rewrite the query and search again when its best match is weak (best "
        "cosine under the rewrite threshold).",
    )
    rewrite_threshold: float = Field(
        default=0.85,
        ge=0,
        le=1,
        title="Rewrite threshold",
        description="Best cosine similarity under which a query is rewritten.",
    )
    llm_filter: bool = Field(
        default=False,
        title="LLM filter",
        description="Ask the language model which of the best candidates help answer the "
        "query and drop the others.",
    )
    second_hop: bool = Field(
        default=True,
        title="Second hop",
        description="Follow the names the best candidates mention to the documents titled by "
        "them, and rank those right after the candidate that names them (multi-hop questions).",
    )
    graph: bool = Field(
        default=False,
        title="Graph search",
        description="Search the knowledge graph beside the dense and keyword searches: the "
        "chunks about or mentioning the entities the query names, fused with the others.",
    )
    graph_hops: int = Field(
        default=2,
        ge=1,
        le=2,
        title="Graph hops",
        description="Hops of the graph search. 1: the chunks linked to the query's entities; "
        "2: also the chunks about the entities those mention.",
    )
    graph_weight: FusionWeight = Field(
        default=1.0,
        title="Graph weight",
        description="Weight of the graph search in fusion, 0 to 10.",
    )


class SearchPlan(SearchOptions):
    """The options one retrieval runs with: the service's settings, overridden per request."""

    rrf_k: int = Field(default=60, ge=1, description="Rank offset of reciprocal rank fusion.")
    rerank_depth: int = Field(
        default=50, ge=1, le=MAX_FETCH_K, description="Candidates the reranker reorders."
    )
    rewrite_attempts: int = Field(default=1, ge=1, le=3, description="Most rewrites of one query.")
    query_max_words: int = Field(
        default=256, ge=8, le=4096, description="Longer queries are cut to fit the model."
    )
    llm_filter_batch: int = Field(
        default=8, ge=1, le=32, description="Passages the relevance filter sends per model call."
    )
    llm_filter_concurrency: int = Field(
        default=2, ge=1, le=8, description="Relevance filter calls in flight per retrieval."
    )

    def resolve(self, options: RetrievalOptions) -> SearchPlan:
        """This plan with every option the request sets; ``InvalidRequestError`` when a
        hybrid search would weigh both searches 0."""
        chosen = options.model_dump(exclude_none=True)
        plan = self.model_copy(update=chosen) if chosen else self
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


def override_of(field: FieldInfo) -> tuple[Any, FieldInfo]:
    """``field`` as an override: the same bounds and description, ``None`` until set."""
    return field.annotation | None, FieldInfo.merge_field_infos(field, default=None)


RetrievalOptions = create_model(
    "RetrievalOptions",
    __base__=Frozen,
    __module__=__name__,
    __doc__="Per-request options; one left ``None`` takes the service's setting.",
    **{name: override_of(field) for name, field in SearchOptions.model_fields.items()},
)

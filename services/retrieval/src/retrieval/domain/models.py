"""What the service ingests and what it answers with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Annotated, Any, TypeVar

from pydantic import (
    BaseModel,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from retrieval.domain.frozen import Frozen
from retrieval.domain.metadata import Metadata
from retrieval.domain.provenance import SourceField, SourceText
from retrieval.domain.ranking.fusion import FusionMethod as FusionMethod
from retrieval.domain.search_plan import MAX_FETCH_K as MAX_FETCH_K
from retrieval.domain.search_plan import MAX_TOP_K, RetrievalOptions
from retrieval.domain.search_plan import SearchMode as SearchMode
from retrieval.domain.stage_names import StageName
from retrieval.errors import InvalidRequestError

SLUG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
DomainName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Namespace = Slug

SLUG = TypeAdapter(Slug)
M = TypeVar("M", bound=BaseModel)


def check_slug(value: str, field: str) -> str:
    """An identifier (document id, namespace) a store may be asked for, or InvalidRequestError."""
    if not value:
        raise InvalidRequestError("is required", field=field)
    try:
        return SLUG.validate_python(value)
    except ValidationError as error:
        raise InvalidRequestError(error.errors()[0]["msg"], field=field) from error


def given_namespace(namespace: str | None) -> str | None:
    """None (the service's default namespace), or ``namespace`` checked to be a name a store
    may be asked for: an empty or blank one is refused, never taken for the default."""
    if namespace is None:
        return None
    if not namespace.strip():
        raise InvalidRequestError(
            "must not be empty or blank; leave it out for the default namespace",
            field="namespace",
        )
    return check_slug(namespace, "namespace")


def namespace_or_default(namespace: str | None, default: str) -> str:
    """``namespace`` (see ``given_namespace``), else ``default``, checked to be a name a store
    may be asked for."""
    return given_namespace(namespace) or check_slug(default, "namespace")


def invalid_request(error: ValidationError, prefix: str | None = None) -> InvalidRequestError:
    """The first problem Pydantic found, naming its field (under ``prefix``, if given)."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in (prefix, *first["loc"]) if part is not None)
    return InvalidRequestError(first["msg"], field=field or None)


def validated(model: type[M], **fields: Any) -> M:
    """``model(**fields)``, or InvalidRequestError naming the first field that fails."""
    try:
        return model(**fields)
    except ValidationError as error:
        raise invalid_request(error) from error


MAX_QUERY_CHARS = 32_768
"""Longer requests are refused; a query over the model's window is cut (``query_truncated``)."""


class KnowledgeDomain(StrEnum):
    """The knowledge domains of the default (tea growing) knowledge base."""

    PLANT_DISEASES = "plant_diseases"
    TEA_CULTIVATION = "tea_cultivation"
    WEATHER_PATTERNS = "weather_patterns"
    QUALITY_STANDARDS = "quality_standards"
    REGIONAL_CONTEXT = "regional_context"


DEFAULT_DOMAINS: tuple[str, ...] = tuple(domain.value for domain in KnowledgeDomain)


class RagDocument(Frozen):
    """A source document before chunking."""

    document_id: Slug = Field(description="Stable identifier chosen by the knowledge base.")
    title: str = Field(min_length=1, max_length=512, description="Human-readable title.")
    domain: DomainName = Field(description="Knowledge domain the document belongs to.")
    content: str = Field(min_length=1, description="Markdown body of the document.")
    metadata: Metadata = Field(
        default_factory=dict, description="Extra filterable attributes copied to every chunk."
    )
    source: SourceField = Field(
        default=None,
        description="Where it was read from (a bare string is the path or URL); documents "
        "from files always have one. Two sources never share a document id unless the "
        "caller replaces on purpose.",
    )


class RagChunk(Frozen):
    """A piece of a document small enough for one embedding window."""

    chunk_id: str = Field(
        min_length=1, max_length=512, description="Document id, position and content hash."
    )
    document_id: Slug = Field(description="Document the chunk was cut from.")
    namespace: Namespace = Field(description="Namespace the chunk lives in.")
    title: str = Field(description="Title of the document.")
    domain: DomainName = Field(description="Knowledge domain of the document.")
    position: int = Field(ge=0, description="Zero-based position of the chunk in the document.")
    content: str = Field(min_length=1, description="Text of the chunk, headings included.")
    metadata: Metadata = Field(default_factory=dict, description="The document's metadata.")
    source: str | None = Field(default=None, description="The document's path or URL.")
    file_type: str | None = Field(default=None, description="Type of the document's file.")
    section: str = Field(
        default="", description="Heading path of the chunk below the title, plain text."
    )
    pages: tuple[int, ...] = Field(default=(), description="Pages of the source it spans.")


DENSE = "dense"
"""Source name of the vector search; its score is the cosine similarity."""
KEYWORD = "keyword"
"""Source name of the keyword search; its score is BM25 (or the sparse index's dot product)."""
GRAPH = "graph"
"""Source name of the graph search; its score sums the question's entities a chunk is about
or mentions, weighted by their rarity (``retrieval.service.retrieval.pipeline.graph_search``)."""
FUSED = "fused"
"""Score name of the fusion of both sources."""
RERANK = "rerank"
"""Score name of the reranker (0 to 1)."""


def meets_threshold(cosine: float | None, confidence_threshold: float) -> bool:
    """Whether a match with this cosine similarity (None: unknown) passes the threshold: a
    positive threshold needs a known cosine at or above it."""
    if cosine is None:
        return confidence_threshold == 0
    return cosine >= confidence_threshold


class StageTimings(Frozen):
    """Wall-clock milliseconds spent in each stage of one retrieval, and in the whole call."""

    stages: dict[str, NonNegativeFloat] = Field(
        default_factory=dict, description="Milliseconds per stage that ran, by stage name."
    )
    total_ms: float = Field(default=0.0, ge=0, description="The whole call.")
    round_trips: dict[str, NonNegativeInt] = Field(
        default_factory=dict,
        description="Requests sent to remote stores (MongoDB commands, Pinecone calls) by the "
        "stage that sent them (``cache``: reading the namespace's generation); a stage that "
        "sent none is absent.",
    )

    @property
    def embed_ms(self) -> float:
        """Embedding the query."""
        return self.stages.get(StageName.EMBED, 0.0)

    @property
    def search_ms(self) -> float:
        """Searching the vector index."""
        return self.stages.get(StageName.SEARCH, 0.0)

    @property
    def fetch_ms(self) -> float:
        """Fetching chunk texts."""
        return self.stages.get(StageName.FETCH, 0.0)


class RetrievalQuery(Frozen):
    """A validated retrieval request."""

    query: str = Field(max_length=MAX_QUERY_CHARS, description="Natural-language question.")
    domains: tuple[DomainName, ...] = Field(
        default=(), description="Restrict matches to these domains; empty means all."
    )
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K, description="Most matches to return.")
    confidence_threshold: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="Drop matches whose cosine similarity to the query (``scores['dense']``) "
        "is below this, whatever the mode and fusion.",
    )
    namespace: Namespace | None = Field(
        default=None, description="Namespace to search; None means the service's default."
    )
    source_prefix: SourceText | None = Field(
        default=None,
        description="Only chunks of documents whose source is this path or URL or lies "
        "below it, segment by segment (``/kb/docs`` matches ``/kb/docs/a.md``, not "
        "``/kb/docs-old/a.md``).",
    )
    section: str | None = Field(
        default=None,
        min_length=1,
        max_length=512,
        description="Only chunks of exactly this section (heading path below the title).",
    )
    options: RetrievalOptions = Field(
        default_factory=RetrievalOptions, description="Switches; unset ones take the settings."
    )

    @classmethod
    def checked(
        cls,
        query: str,
        domains: Sequence[str] = (),
        top_k: int = 5,
        confidence_threshold: float = 0.0,
        namespace: str | None = None,
        options: RetrievalOptions | None = None,
        *,
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> RetrievalQuery:
        """The request of a caller's arguments (an empty namespace: the default);
        ``InvalidRequestError`` naming the first field that fails."""
        return validated(
            cls,
            query=query,
            domains=tuple(domains),
            top_k=top_k,
            confidence_threshold=confidence_threshold,
            namespace=namespace or None,
            source_prefix=source_prefix,
            section=section,
            options=options or RetrievalOptions(),
        )


class RetrievalMatch(Frozen):
    """One chunk that answers a query."""

    chunk_id: str = Field(description="Identifier of the chunk.")
    content: str = Field(description="Text of the chunk.")
    score: float = Field(
        description="The score the ranking used, comparable only within one result: the "
        "cosine similarity in dense mode, BM25 in keyword mode, the fused score in hybrid mode."
    )
    scores: dict[str, float] = Field(
        default_factory=dict,
        description="Scores by source: ``dense`` (cosine similarity, present when the dense "
        "search found the chunk or a threshold or MMR needed it), ``keyword``, ``fused``.",
    )
    document_id: str = Field(description="Document the chunk belongs to.")
    title: str = Field(description="Title of that document.")
    domain: str = Field(description="Knowledge domain of that document.")
    metadata: Metadata = Field(default_factory=dict, description="The document's metadata.")
    source: str | None = Field(
        default=None, description="Path or URL of the document; None when it has none."
    )
    file_type: str | None = Field(default=None, description="Type of the document's file.")
    section: str = Field(
        default="", description="Heading path of the chunk below the title, plain text."
    )
    pages: tuple[int, ...] = Field(
        default=(), description="Pages of the source the chunk spans (PDF); empty if none."
    )


class QueryRewrite(Frozen):
    """One rewrite of a query whose best match was weak, and what searching again found."""

    attempt: int = Field(ge=1, description="1 for the first rewrite.")
    method: str = Field(description="How it was rewritten: rocchio or llm.")
    query: str = Field(description="The query searched again; the same text for rocchio.")
    reason: str = Field(description="Why it was rewritten.")
    error: str | None = Field(
        default=None, description="Why the rewrite failed (the query before it stands)."
    )
    best_cosine: float | None = Field(
        default=None,
        description="Best cosine similarity to the query as asked after searching again; "
        "None if the rewrite failed or nothing passed the threshold.",
    )


class MatchStatistics(Frozen):
    """How many matches a retrieval returned and how their ranking scores spread."""

    matches: int = Field(default=0, ge=0, description="Matches returned.")
    mean_score: float | None = Field(default=None, description="Mean ``score``; None if none.")
    max_score: float | None = Field(default=None, description="Best ``score``; None if none.")
    min_score: float | None = Field(default=None, description="Worst ``score``; None if none.")

    @classmethod
    def of(cls, scores: Sequence[float]) -> MatchStatistics:
        """The statistics of ``scores``, built without validation (a count and three of the
        scores' own figures)."""
        if not scores:
            return cls.model_construct()
        return cls.model_construct(
            matches=len(scores),
            mean_score=math.fsum(scores) / len(scores),
            max_score=max(scores),
            min_score=min(scores),
        )


class RetrievalResult(Frozen):
    """The answer to a retrieval query, best match first."""

    matches: tuple[RetrievalMatch, ...] = Field(description="Matches, best first.")
    query: str = Field(description="The query as asked.")
    namespace: str = Field(description="Namespace searched.")
    total_matches: int = Field(ge=0, description="Number of matches returned.")
    timings: StageTimings = Field(default_factory=StageTimings, description="Stage durations.")
    query_truncated: bool = Field(
        default=False, description="The query was longer than the model's window and was cut."
    )
    degraded: tuple[str, ...] = Field(
        default=(), description="Sources that failed; the others answered alone."
    )
    cached: bool = Field(
        default=False,
        description="Served from the result cache: computed for an identical earlier request, "
        "and no write to the namespace has completed since that computation began.",
    )
    statistics: MatchStatistics = Field(
        default_factory=MatchStatistics,
        description="Number of matches and the mean, best and worst of their ``score``.",
    )
    rewrites: tuple[QueryRewrite, ...] = Field(
        default=(), description="Rewrites of a weak query, in order; empty when none ran."
    )
    query_used: str = Field(
        default="",
        description="The query text the matches were found with: normalised, cut to the "
        "model's window, rewritten; empty for a blank query.",
    )

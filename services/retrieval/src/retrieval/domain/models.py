"""What the service ingests and what it answers with."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from retrieval.domain.metadata import Metadata
from retrieval.errors import InvalidRequestError

SLUG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$"
Slug = Annotated[str, StringConstraints(pattern=SLUG_PATTERN)]
DomainName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Namespace = Slug

SLUG = TypeAdapter(Slug)


def check_slug(value: str, field: str) -> str:
    """An identifier (document id, namespace) a store may be asked for, or InvalidRequestError."""
    if not value:
        raise InvalidRequestError("is required", field=field)
    try:
        return SLUG.validate_python(value)
    except ValidationError as error:
        raise InvalidRequestError(error.errors()[0]["msg"], field=field) from error


MAX_QUERY_CHARS = 2048
MAX_TOP_K = 100


class KnowledgeDomain(StrEnum):
    """The knowledge domains of the default (tea growing) knowledge base."""

    PLANT_DISEASES = "plant_diseases"
    TEA_CULTIVATION = "tea_cultivation"
    WEATHER_PATTERNS = "weather_patterns"
    QUALITY_STANDARDS = "quality_standards"
    REGIONAL_CONTEXT = "regional_context"


DEFAULT_DOMAINS: tuple[str, ...] = tuple(domain.value for domain in KnowledgeDomain)


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RagDocument(Frozen):
    """A source document before chunking."""

    document_id: Slug = Field(description="Stable identifier chosen by the knowledge base.")
    title: str = Field(min_length=1, max_length=512, description="Human-readable title.")
    domain: DomainName = Field(description="Knowledge domain the document belongs to.")
    content: str = Field(min_length=1, description="Markdown body of the document.")
    metadata: Metadata = Field(
        default_factory=dict, description="Extra filterable attributes copied to every chunk."
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


class StageTimings(Frozen):
    """Wall-clock milliseconds spent in each stage of one retrieval."""

    embed_ms: float = Field(default=0.0, ge=0, description="Embedding the query.")
    search_ms: float = Field(default=0.0, ge=0, description="Searching the vector index.")
    fetch_ms: float = Field(default=0.0, ge=0, description="Fetching chunk texts.")
    total_ms: float = Field(default=0.0, ge=0, description="The whole call.")


class RetrievalQuery(Frozen):
    """A validated retrieval request."""

    query: str = Field(max_length=MAX_QUERY_CHARS, description="Natural-language question.")
    domains: tuple[DomainName, ...] = Field(
        default=(), description="Restrict matches to these domains; empty means all."
    )
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K, description="Most matches to return.")
    confidence_threshold: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Drop matches scoring below this cosine."
    )
    namespace: Namespace = Field(description="Namespace to search.")

    @property
    def is_blank(self) -> bool:
        return not self.query.strip()


class RetrievalMatch(Frozen):
    """One chunk that answers a query."""

    chunk_id: str = Field(description="Identifier of the chunk.")
    content: str = Field(description="Text of the chunk.")
    score: float = Field(description="Cosine similarity between query and chunk.")
    document_id: str = Field(description="Document the chunk belongs to.")
    title: str = Field(description="Title of that document.")
    domain: str = Field(description="Knowledge domain of that document.")
    metadata: Metadata = Field(default_factory=dict, description="The document's metadata.")


class RetrievalResult(Frozen):
    """The answer to a retrieval query, best match first."""

    matches: tuple[RetrievalMatch, ...] = Field(description="Matches ordered by score.")
    query: str = Field(description="The query as asked.")
    namespace: str = Field(description="Namespace searched.")
    total_matches: int = Field(ge=0, description="Number of matches returned.")
    timings: StageTimings = Field(default_factory=StageTimings, description="Stage durations.")

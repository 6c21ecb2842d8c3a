import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_CREATED: _ClassVar[Outcome]
    OUTCOME_UPDATED: _ClassVar[Outcome]
    OUTCOME_UNCHANGED: _ClassVar[Outcome]
    OUTCOME_FAILED: _ClassVar[Outcome]
    OUTCOME_DELETED: _ClassVar[Outcome]

class HealthStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HEALTH_STATUS_UNSPECIFIED: _ClassVar[HealthStatus]
    HEALTH_STATUS_GREEN: _ClassVar[HealthStatus]
    HEALTH_STATUS_YELLOW: _ClassVar[HealthStatus]
    HEALTH_STATUS_RED: _ClassVar[HealthStatus]
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_CREATED: Outcome
OUTCOME_UPDATED: Outcome
OUTCOME_UNCHANGED: Outcome
OUTCOME_FAILED: Outcome
OUTCOME_DELETED: Outcome
HEALTH_STATUS_UNSPECIFIED: HealthStatus
HEALTH_STATUS_GREEN: HealthStatus
HEALTH_STATUS_YELLOW: HealthStatus
HEALTH_STATUS_RED: HealthStatus

class BackupNamespaceRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class BackupNamespaceResponse(_message.Message):
    __slots__ = ("data", "summary")
    DATA_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    summary: BackupSummary
    def __init__(self, data: _Optional[bytes] = ..., summary: _Optional[_Union[BackupSummary, _Mapping]] = ...) -> None: ...

class BackupSummary(_message.Message):
    __slots__ = ("namespace", "model", "dimension", "documents", "chunks", "without_vectors", "left_out")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    WITHOUT_VECTORS_FIELD_NUMBER: _ClassVar[int]
    LEFT_OUT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    model: str
    dimension: int
    documents: int
    chunks: int
    without_vectors: _containers.RepeatedScalarFieldContainer[str]
    left_out: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., model: _Optional[str] = ..., dimension: _Optional[int] = ..., documents: _Optional[int] = ..., chunks: _Optional[int] = ..., without_vectors: _Optional[_Iterable[str]] = ..., left_out: _Optional[_Iterable[str]] = ...) -> None: ...

class RestoreNamespaceRequest(_message.Message):
    __slots__ = ("namespace", "replace", "data")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    replace: bool
    data: bytes
    def __init__(self, namespace: _Optional[str] = ..., replace: _Optional[bool] = ..., data: _Optional[bytes] = ...) -> None: ...

class RestoreNamespaceResponse(_message.Message):
    __slots__ = ("namespace", "documents", "chunks", "embedded_again", "restored", "unchanged", "failed", "deleted")
    class FailedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_AGAIN_FIELD_NUMBER: _ClassVar[int]
    RESTORED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    documents: int
    chunks: int
    embedded_again: bool
    restored: int
    unchanged: int
    failed: _containers.ScalarMap[str, str]
    deleted: int
    def __init__(self, namespace: _Optional[str] = ..., documents: _Optional[int] = ..., chunks: _Optional[int] = ..., embedded_again: _Optional[bool] = ..., restored: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[_Mapping[str, str]] = ..., deleted: _Optional[int] = ...) -> None: ...

class BuildContextRequest(_message.Message):
    __slots__ = ("retrieval",)
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    retrieval: RetrieveRequest
    def __init__(self, retrieval: _Optional[_Union[RetrieveRequest, _Mapping]] = ...) -> None: ...

class AnswerRequest(_message.Message):
    __slots__ = ("retrieval",)
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    retrieval: RetrieveRequest
    def __init__(self, retrieval: _Optional[_Union[RetrieveRequest, _Mapping]] = ...) -> None: ...

class AnswerStreamRequest(_message.Message):
    __slots__ = ("retrieval",)
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    retrieval: RetrieveRequest
    def __init__(self, retrieval: _Optional[_Union[RetrieveRequest, _Mapping]] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("number", "chunk_id", "document_id", "title", "domain", "source", "section", "pages")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    number: int
    chunk_id: str
    document_id: str
    title: str
    domain: str
    source: str
    section: str
    pages: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, number: _Optional[int] = ..., chunk_id: _Optional[str] = ..., document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ..., source: _Optional[str] = ..., section: _Optional[str] = ..., pages: _Optional[_Iterable[int]] = ...) -> None: ...

class Context(_message.Message):
    __slots__ = ("text", "citations", "tokens", "dropped", "truncated")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    text: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    tokens: int
    dropped: _containers.RepeatedScalarFieldContainer[str]
    truncated: bool
    def __init__(self, text: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., tokens: _Optional[int] = ..., dropped: _Optional[_Iterable[str]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class BuildContextResponse(_message.Message):
    __slots__ = ("context", "retrieval")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    RETRIEVAL_FIELD_NUMBER: _ClassVar[int]
    context: Context
    retrieval: RetrieveResponse
    def __init__(self, context: _Optional[_Union[Context, _Mapping]] = ..., retrieval: _Optional[_Union[RetrieveResponse, _Mapping]] = ...) -> None: ...

class AnswerResponse(_message.Message):
    __slots__ = ("answered", "text", "citations", "unknown_citations", "confidence", "model", "finish_reason", "context", "generation_ms", "query_truncated", "degraded", "namespace")
    ANSWERED_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_CITATIONS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    GENERATION_MS_FIELD_NUMBER: _ClassVar[int]
    QUERY_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    answered: bool
    text: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    unknown_citations: _containers.RepeatedScalarFieldContainer[int]
    confidence: float
    model: str
    finish_reason: str
    context: Context
    generation_ms: float
    query_truncated: bool
    degraded: _containers.RepeatedScalarFieldContainer[str]
    namespace: str
    def __init__(self, answered: _Optional[bool] = ..., text: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ..., unknown_citations: _Optional[_Iterable[int]] = ..., confidence: _Optional[float] = ..., model: _Optional[str] = ..., finish_reason: _Optional[str] = ..., context: _Optional[_Union[Context, _Mapping]] = ..., generation_ms: _Optional[float] = ..., query_truncated: _Optional[bool] = ..., degraded: _Optional[_Iterable[str]] = ..., namespace: _Optional[str] = ...) -> None: ...

class AnswerStreamResponse(_message.Message):
    __slots__ = ("delta", "answer")
    DELTA_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    delta: str
    answer: AnswerResponse
    def __init__(self, delta: _Optional[str] = ..., answer: _Optional[_Union[AnswerResponse, _Mapping]] = ...) -> None: ...

class RetrieveRequest(_message.Message):
    __slots__ = ("query", "domains", "top_k", "confidence_threshold", "namespace", "options", "source_prefix", "section")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    query: str
    domains: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    confidence_threshold: float
    namespace: str
    options: RetrievalOptions
    source_prefix: str
    section: str
    def __init__(self, query: _Optional[str] = ..., domains: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ..., confidence_threshold: _Optional[float] = ..., namespace: _Optional[str] = ..., options: _Optional[_Union[RetrievalOptions, _Mapping]] = ..., source_prefix: _Optional[str] = ..., section: _Optional[str] = ...) -> None: ...

class RetrievalOptions(_message.Message):
    __slots__ = ("mode", "fusion", "dense_weight", "keyword_weight", "fetch_k", "mmr_lambda", "max_per_document", "rerank", "redundancy_threshold", "neighbours", "rewrite", "rewrite_threshold", "llm_filter", "second_hop", "graph", "graph_hops", "graph_weight")
    MODE_FIELD_NUMBER: _ClassVar[int]
    FUSION_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    FETCH_K_FIELD_NUMBER: _ClassVar[int]
    MMR_LAMBDA_FIELD_NUMBER: _ClassVar[int]
    MAX_PER_DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    REDUNDANCY_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    NEIGHBOURS_FIELD_NUMBER: _ClassVar[int]
    REWRITE_FIELD_NUMBER: _ClassVar[int]
    REWRITE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    LLM_FILTER_FIELD_NUMBER: _ClassVar[int]
    SECOND_HOP_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    GRAPH_HOPS_FIELD_NUMBER: _ClassVar[int]
    GRAPH_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    mode: str
    fusion: str
    dense_weight: float
    keyword_weight: float
    fetch_k: int
    mmr_lambda: float
    max_per_document: int
    rerank: bool
    redundancy_threshold: float
    neighbours: int
    rewrite: bool
    rewrite_threshold: float
    llm_filter: bool
    second_hop: bool
    graph: bool
    graph_hops: int
    graph_weight: float
    def __init__(self, mode: _Optional[str] = ..., fusion: _Optional[str] = ..., dense_weight: _Optional[float] = ..., keyword_weight: _Optional[float] = ..., fetch_k: _Optional[int] = ..., mmr_lambda: _Optional[float] = ..., max_per_document: _Optional[int] = ..., rerank: _Optional[bool] = ..., redundancy_threshold: _Optional[float] = ..., neighbours: _Optional[int] = ..., rewrite: _Optional[bool] = ..., rewrite_threshold: _Optional[float] = ..., llm_filter: _Optional[bool] = ..., second_hop: _Optional[bool] = ..., graph: _Optional[bool] = ..., graph_hops: _Optional[int] = ..., graph_weight: _Optional[float] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("matches", "query", "namespace", "total_matches", "timings", "stage_ms", "query_truncated", "degraded", "cached", "statistics", "rewrites", "query_used")
    class StageMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MATCHES_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    STAGE_MS_FIELD_NUMBER: _ClassVar[int]
    QUERY_TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    STATISTICS_FIELD_NUMBER: _ClassVar[int]
    REWRITES_FIELD_NUMBER: _ClassVar[int]
    QUERY_USED_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[RetrievalMatch]
    query: str
    namespace: str
    total_matches: int
    timings: StageTimings
    stage_ms: _containers.ScalarMap[str, float]
    query_truncated: bool
    degraded: _containers.RepeatedScalarFieldContainer[str]
    cached: bool
    statistics: MatchStatistics
    rewrites: _containers.RepeatedCompositeFieldContainer[QueryRewrite]
    query_used: str
    def __init__(self, matches: _Optional[_Iterable[_Union[RetrievalMatch, _Mapping]]] = ..., query: _Optional[str] = ..., namespace: _Optional[str] = ..., total_matches: _Optional[int] = ..., timings: _Optional[_Union[StageTimings, _Mapping]] = ..., stage_ms: _Optional[_Mapping[str, float]] = ..., query_truncated: _Optional[bool] = ..., degraded: _Optional[_Iterable[str]] = ..., cached: _Optional[bool] = ..., statistics: _Optional[_Union[MatchStatistics, _Mapping]] = ..., rewrites: _Optional[_Iterable[_Union[QueryRewrite, _Mapping]]] = ..., query_used: _Optional[str] = ...) -> None: ...

class QueryRewrite(_message.Message):
    __slots__ = ("attempt", "method", "query", "reason", "best_cosine", "error")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    BEST_COSINE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    method: str
    query: str
    reason: str
    best_cosine: float
    error: str
    def __init__(self, attempt: _Optional[int] = ..., method: _Optional[str] = ..., query: _Optional[str] = ..., reason: _Optional[str] = ..., best_cosine: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...

class MatchStatistics(_message.Message):
    __slots__ = ("matches", "mean_score", "max_score", "min_score")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    MAX_SCORE_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    matches: int
    mean_score: float
    max_score: float
    min_score: float
    def __init__(self, matches: _Optional[int] = ..., mean_score: _Optional[float] = ..., max_score: _Optional[float] = ..., min_score: _Optional[float] = ...) -> None: ...

class RetrievalMatch(_message.Message):
    __slots__ = ("chunk_id", "content", "score", "document_id", "title", "domain", "metadata", "scores", "source", "file_type", "section", "pages")
    class ScoresEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FILE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    content: str
    score: float
    document_id: str
    title: str
    domain: str
    metadata: _struct_pb2.Struct
    scores: _containers.ScalarMap[str, float]
    source: str
    file_type: str
    section: str
    pages: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, chunk_id: _Optional[str] = ..., content: _Optional[str] = ..., score: _Optional[float] = ..., document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scores: _Optional[_Mapping[str, float]] = ..., source: _Optional[str] = ..., file_type: _Optional[str] = ..., section: _Optional[str] = ..., pages: _Optional[_Iterable[int]] = ...) -> None: ...

class StageTimings(_message.Message):
    __slots__ = ("embed_ms", "search_ms", "fetch_ms", "total_ms", "round_trips")
    class RoundTripsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    EMBED_MS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_MS_FIELD_NUMBER: _ClassVar[int]
    FETCH_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    ROUND_TRIPS_FIELD_NUMBER: _ClassVar[int]
    embed_ms: float
    search_ms: float
    fetch_ms: float
    total_ms: float
    round_trips: _containers.ScalarMap[str, int]
    def __init__(self, embed_ms: _Optional[float] = ..., search_ms: _Optional[float] = ..., fetch_ms: _Optional[float] = ..., total_ms: _Optional[float] = ..., round_trips: _Optional[_Mapping[str, int]] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("document_id", "title", "domain", "content", "metadata", "source")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    title: str
    domain: str
    content: str
    metadata: _struct_pb2.Struct
    source: Source
    def __init__(self, document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source: _Optional[_Union[Source, _Mapping]] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("uri", "root", "file_type", "size", "modified_at")
    URI_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    FILE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_AT_FIELD_NUMBER: _ClassVar[int]
    uri: str
    root: str
    file_type: str
    size: int
    modified_at: _timestamp_pb2.Timestamp
    def __init__(self, uri: _Optional[str] = ..., root: _Optional[str] = ..., file_type: _Optional[str] = ..., size: _Optional[int] = ..., modified_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class IngestDocumentsRequest(_message.Message):
    __slots__ = ("namespace", "documents", "replace", "refused_as_outcomes")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    REFUSED_AS_OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    documents: _containers.RepeatedCompositeFieldContainer[Document]
    replace: bool
    refused_as_outcomes: bool
    def __init__(self, namespace: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[Document, _Mapping]]] = ..., replace: _Optional[bool] = ..., refused_as_outcomes: _Optional[bool] = ...) -> None: ...

class IngestDocumentsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[DocumentOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[DocumentOutcome, _Mapping]]] = ...) -> None: ...

class DocumentOutcome(_message.Message):
    __slots__ = ("document_id", "outcome", "chunks", "error", "source", "field")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FIELD_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    outcome: Outcome
    chunks: int
    error: str
    source: str
    field: str
    def __init__(self, document_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., chunks: _Optional[int] = ..., error: _Optional[str] = ..., source: _Optional[str] = ..., field: _Optional[str] = ...) -> None: ...

class DeleteDocumentRequest(_message.Message):
    __slots__ = ("document_id", "namespace")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    namespace: str
    def __init__(self, document_id: _Optional[str] = ..., namespace: _Optional[str] = ...) -> None: ...

class DeleteDocumentResponse(_message.Message):
    __slots__ = ("deleted_chunks",)
    DELETED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    deleted_chunks: int
    def __init__(self, deleted_chunks: _Optional[int] = ...) -> None: ...

class DeleteNamespaceRequest(_message.Message):
    __slots__ = ("namespace",)
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    def __init__(self, namespace: _Optional[str] = ...) -> None: ...

class DeleteNamespaceResponse(_message.Message):
    __slots__ = ("deleted_chunks",)
    DELETED_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    deleted_chunks: int
    def __init__(self, deleted_chunks: _Optional[int] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatsResponse(_message.Message):
    __slots__ = ("dimension", "total_vector_count", "namespaces", "status", "reasons", "embedding_model", "total_chunk_count", "footprints")
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    TOTAL_VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    TOTAL_CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    FOOTPRINTS_FIELD_NUMBER: _ClassVar[int]
    dimension: int
    total_vector_count: int
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceStats]
    status: HealthStatus
    reasons: _containers.RepeatedScalarFieldContainer[str]
    embedding_model: str
    total_chunk_count: int
    footprints: _containers.RepeatedCompositeFieldContainer[StoreFootprint]
    def __init__(self, dimension: _Optional[int] = ..., total_vector_count: _Optional[int] = ..., namespaces: _Optional[_Iterable[_Union[NamespaceStats, _Mapping]]] = ..., status: _Optional[_Union[HealthStatus, str]] = ..., reasons: _Optional[_Iterable[str]] = ..., embedding_model: _Optional[str] = ..., total_chunk_count: _Optional[int] = ..., footprints: _Optional[_Iterable[_Union[StoreFootprint, _Mapping]]] = ...) -> None: ...

class NamespaceStats(_message.Message):
    __slots__ = ("namespace", "vector_count", "chunk_count", "status", "reasons", "orphans", "entity_count")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    ORPHANS_FIELD_NUMBER: _ClassVar[int]
    ENTITY_COUNT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    vector_count: int
    chunk_count: int
    status: HealthStatus
    reasons: _containers.RepeatedScalarFieldContainer[str]
    orphans: NamespaceOrphans
    entity_count: int
    def __init__(self, namespace: _Optional[str] = ..., vector_count: _Optional[int] = ..., chunk_count: _Optional[int] = ..., status: _Optional[_Union[HealthStatus, str]] = ..., reasons: _Optional[_Iterable[str]] = ..., orphans: _Optional[_Union[NamespaceOrphans, _Mapping]] = ..., entity_count: _Optional[int] = ...) -> None: ...

class NamespaceOrphans(_message.Message):
    __slots__ = ("texts_without_vectors", "vectors_without_texts", "texts_without_keywords", "keywords_without_texts", "stale_chunks", "pending_documents", "texts_without_graph", "graph_without_texts")
    TEXTS_WITHOUT_VECTORS_FIELD_NUMBER: _ClassVar[int]
    VECTORS_WITHOUT_TEXTS_FIELD_NUMBER: _ClassVar[int]
    TEXTS_WITHOUT_KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    KEYWORDS_WITHOUT_TEXTS_FIELD_NUMBER: _ClassVar[int]
    STALE_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PENDING_DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    TEXTS_WITHOUT_GRAPH_FIELD_NUMBER: _ClassVar[int]
    GRAPH_WITHOUT_TEXTS_FIELD_NUMBER: _ClassVar[int]
    texts_without_vectors: int
    vectors_without_texts: int
    texts_without_keywords: int
    keywords_without_texts: int
    stale_chunks: int
    pending_documents: int
    texts_without_graph: int
    graph_without_texts: int
    def __init__(self, texts_without_vectors: _Optional[int] = ..., vectors_without_texts: _Optional[int] = ..., texts_without_keywords: _Optional[int] = ..., keywords_without_texts: _Optional[int] = ..., stale_chunks: _Optional[int] = ..., pending_documents: _Optional[int] = ..., texts_without_graph: _Optional[int] = ..., graph_without_texts: _Optional[int] = ...) -> None: ...

class StoreFootprint(_message.Message):
    __slots__ = ("store", "disk_bytes", "memory_bytes")
    STORE_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    store: str
    disk_bytes: int
    memory_bytes: int
    def __init__(self, store: _Optional[str] = ..., disk_bytes: _Optional[int] = ..., memory_bytes: _Optional[int] = ...) -> None: ...

class ValidationCase(_message.Message):
    __slots__ = ("query", "id", "expected_document_ids", "expected_keywords", "min_score", "query_type", "domains")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_KEYWORDS_FIELD_NUMBER: _ClassVar[int]
    MIN_SCORE_FIELD_NUMBER: _ClassVar[int]
    QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    query: str
    id: str
    expected_document_ids: _containers.RepeatedScalarFieldContainer[str]
    expected_keywords: _containers.RepeatedScalarFieldContainer[str]
    min_score: float
    query_type: str
    domains: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, query: _Optional[str] = ..., id: _Optional[str] = ..., expected_document_ids: _Optional[_Iterable[str]] = ..., expected_keywords: _Optional[_Iterable[str]] = ..., min_score: _Optional[float] = ..., query_type: _Optional[str] = ..., domains: _Optional[_Iterable[str]] = ...) -> None: ...

class ValidateRequest(_message.Message):
    __slots__ = ("namespace", "cases", "expected_metadata", "success_criterion", "top_k")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    CASES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_METADATA_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_CRITERION_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    cases: _containers.RepeatedCompositeFieldContainer[ValidationCase]
    expected_metadata: _containers.RepeatedScalarFieldContainer[str]
    success_criterion: float
    top_k: int
    def __init__(self, namespace: _Optional[str] = ..., cases: _Optional[_Iterable[_Union[ValidationCase, _Mapping]]] = ..., expected_metadata: _Optional[_Iterable[str]] = ..., success_criterion: _Optional[float] = ..., top_k: _Optional[int] = ...) -> None: ...

class FailedQuery(_message.Message):
    __slots__ = ("id", "query", "query_type", "reasons", "top_score")
    ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    TOP_SCORE_FIELD_NUMBER: _ClassVar[int]
    id: str
    query: str
    query_type: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    top_score: float
    def __init__(self, id: _Optional[str] = ..., query: _Optional[str] = ..., query_type: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ..., top_score: _Optional[float] = ...) -> None: ...

class QueryTypeFigures(_message.Message):
    __slots__ = ("total", "passed", "success_rate")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    total: int
    passed: int
    success_rate: float
    def __init__(self, total: _Optional[int] = ..., passed: _Optional[int] = ..., success_rate: _Optional[float] = ...) -> None: ...

class ScoreStatistics(_message.Message):
    __slots__ = ("count", "mean", "median", "min", "max")
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    MEDIAN_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    count: int
    mean: float
    median: float
    min: float
    max: float
    def __init__(self, count: _Optional[int] = ..., mean: _Optional[float] = ..., median: _Optional[float] = ..., min: _Optional[float] = ..., max: _Optional[float] = ...) -> None: ...

class ValidateResponse(_message.Message):
    __slots__ = ("namespace", "source", "passed", "success_criterion", "top_k", "total_queries", "passed_queries", "success_rate", "failed_queries", "by_query_type", "top_score", "vector_count", "chunk_count", "metadata_completeness", "expected_metadata", "metadata_field_completeness", "problems")
    class ByQueryTypeEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: QueryTypeFigures
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[QueryTypeFigures, _Mapping]] = ...) -> None: ...
    class MetadataFieldCompletenessEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_CRITERION_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    TOTAL_QUERIES_FIELD_NUMBER: _ClassVar[int]
    PASSED_QUERIES_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_RATE_FIELD_NUMBER: _ClassVar[int]
    FAILED_QUERIES_FIELD_NUMBER: _ClassVar[int]
    BY_QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOP_SCORE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    METADATA_COMPLETENESS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_METADATA_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_COMPLETENESS_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    source: str
    passed: bool
    success_criterion: float
    top_k: int
    total_queries: int
    passed_queries: int
    success_rate: float
    failed_queries: _containers.RepeatedCompositeFieldContainer[FailedQuery]
    by_query_type: _containers.MessageMap[str, QueryTypeFigures]
    top_score: ScoreStatistics
    vector_count: int
    chunk_count: int
    metadata_completeness: float
    expected_metadata: _containers.RepeatedScalarFieldContainer[str]
    metadata_field_completeness: _containers.ScalarMap[str, float]
    problems: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., source: _Optional[str] = ..., passed: _Optional[bool] = ..., success_criterion: _Optional[float] = ..., top_k: _Optional[int] = ..., total_queries: _Optional[int] = ..., passed_queries: _Optional[int] = ..., success_rate: _Optional[float] = ..., failed_queries: _Optional[_Iterable[_Union[FailedQuery, _Mapping]]] = ..., by_query_type: _Optional[_Mapping[str, QueryTypeFigures]] = ..., top_score: _Optional[_Union[ScoreStatistics, _Mapping]] = ..., vector_count: _Optional[int] = ..., chunk_count: _Optional[int] = ..., metadata_completeness: _Optional[float] = ..., expected_metadata: _Optional[_Iterable[str]] = ..., metadata_field_completeness: _Optional[_Mapping[str, float]] = ..., problems: _Optional[_Iterable[str]] = ...) -> None: ...

class SyncDocumentsRequest(_message.Message):
    __slots__ = ("namespace", "documents", "roots", "unreadable", "dry_run", "replace", "allow_mass_delete", "refused_as_outcomes")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    ROOTS_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_MASS_DELETE_FIELD_NUMBER: _ClassVar[int]
    REFUSED_AS_OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    documents: _containers.RepeatedCompositeFieldContainer[Document]
    roots: _containers.RepeatedScalarFieldContainer[str]
    unreadable: _containers.RepeatedScalarFieldContainer[str]
    dry_run: bool
    replace: bool
    allow_mass_delete: bool
    refused_as_outcomes: bool
    def __init__(self, namespace: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[Document, _Mapping]]] = ..., roots: _Optional[_Iterable[str]] = ..., unreadable: _Optional[_Iterable[str]] = ..., dry_run: _Optional[bool] = ..., replace: _Optional[bool] = ..., allow_mass_delete: _Optional[bool] = ..., refused_as_outcomes: _Optional[bool] = ...) -> None: ...

class SyncDocumentsResponse(_message.Message):
    __slots__ = ("namespace", "dry_run", "outcomes", "busy")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    BUSY_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    dry_run: bool
    outcomes: _containers.RepeatedCompositeFieldContainer[DocumentOutcome]
    busy: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, namespace: _Optional[str] = ..., dry_run: _Optional[bool] = ..., outcomes: _Optional[_Iterable[_Union[DocumentOutcome, _Mapping]]] = ..., busy: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteDocumentsRequest(_message.Message):
    __slots__ = ("namespace", "document_ids", "source_prefix", "dry_run")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    document_ids: _containers.RepeatedScalarFieldContainer[str]
    source_prefix: str
    dry_run: bool
    def __init__(self, namespace: _Optional[str] = ..., document_ids: _Optional[_Iterable[str]] = ..., source_prefix: _Optional[str] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class DeleteDocumentsResponse(_message.Message):
    __slots__ = ("namespace", "dry_run", "deleted", "busy", "missing", "chunks")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    BUSY_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    dry_run: bool
    deleted: _containers.RepeatedCompositeFieldContainer[DocumentSummary]
    busy: _containers.RepeatedScalarFieldContainer[str]
    missing: _containers.RepeatedScalarFieldContainer[str]
    chunks: int
    def __init__(self, namespace: _Optional[str] = ..., dry_run: _Optional[bool] = ..., deleted: _Optional[_Iterable[_Union[DocumentSummary, _Mapping]]] = ..., busy: _Optional[_Iterable[str]] = ..., missing: _Optional[_Iterable[str]] = ..., chunks: _Optional[int] = ...) -> None: ...

class ListDocumentsRequest(_message.Message):
    __slots__ = ("namespace", "source_prefix", "page_size", "page_token")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PREFIX_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    source_prefix: str
    page_size: int
    page_token: str
    def __init__(self, namespace: _Optional[str] = ..., source_prefix: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListDocumentsResponse(_message.Message):
    __slots__ = ("documents", "next_page_token")
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    documents: _containers.RepeatedCompositeFieldContainer[DocumentSummary]
    next_page_token: str
    def __init__(self, documents: _Optional[_Iterable[_Union[DocumentSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class DocumentSummary(_message.Message):
    __slots__ = ("document_id", "title", "source", "file_type", "chunks", "updated_at", "pending")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FILE_TYPE_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    title: str
    source: str
    file_type: str
    chunks: int
    updated_at: _timestamp_pb2.Timestamp
    pending: bool
    def __init__(self, document_id: _Optional[str] = ..., title: _Optional[str] = ..., source: _Optional[str] = ..., file_type: _Optional[str] = ..., chunks: _Optional[int] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., pending: _Optional[bool] = ...) -> None: ...

from google.protobuf import struct_pb2 as _struct_pb2
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
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_CREATED: Outcome
OUTCOME_UPDATED: Outcome
OUTCOME_UNCHANGED: Outcome
OUTCOME_FAILED: Outcome

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

class Citation(_message.Message):
    __slots__ = ("number", "chunk_id", "document_id", "title", "domain")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    number: int
    chunk_id: str
    document_id: str
    title: str
    domain: str
    def __init__(self, number: _Optional[int] = ..., chunk_id: _Optional[str] = ..., document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ...) -> None: ...

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

class RetrieveRequest(_message.Message):
    __slots__ = ("query", "domains", "top_k", "confidence_threshold", "namespace", "options")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    DOMAINS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    query: str
    domains: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    confidence_threshold: float
    namespace: str
    options: RetrievalOptions
    def __init__(self, query: _Optional[str] = ..., domains: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ..., confidence_threshold: _Optional[float] = ..., namespace: _Optional[str] = ..., options: _Optional[_Union[RetrievalOptions, _Mapping]] = ...) -> None: ...

class RetrievalOptions(_message.Message):
    __slots__ = ("mode", "fusion", "dense_weight", "keyword_weight", "fetch_k", "mmr_lambda", "max_per_document", "rerank", "redundancy_threshold", "neighbours")
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
    def __init__(self, mode: _Optional[str] = ..., fusion: _Optional[str] = ..., dense_weight: _Optional[float] = ..., keyword_weight: _Optional[float] = ..., fetch_k: _Optional[int] = ..., mmr_lambda: _Optional[float] = ..., max_per_document: _Optional[int] = ..., rerank: _Optional[bool] = ..., redundancy_threshold: _Optional[float] = ..., neighbours: _Optional[int] = ...) -> None: ...

class RetrieveResponse(_message.Message):
    __slots__ = ("matches", "query", "namespace", "total_matches", "timings", "stage_ms", "query_truncated", "degraded", "cached", "statistics")
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
    def __init__(self, matches: _Optional[_Iterable[_Union[RetrievalMatch, _Mapping]]] = ..., query: _Optional[str] = ..., namespace: _Optional[str] = ..., total_matches: _Optional[int] = ..., timings: _Optional[_Union[StageTimings, _Mapping]] = ..., stage_ms: _Optional[_Mapping[str, float]] = ..., query_truncated: _Optional[bool] = ..., degraded: _Optional[_Iterable[str]] = ..., cached: _Optional[bool] = ..., statistics: _Optional[_Union[MatchStatistics, _Mapping]] = ...) -> None: ...

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
    __slots__ = ("chunk_id", "content", "score", "document_id", "title", "domain", "metadata", "scores")
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
    chunk_id: str
    content: str
    score: float
    document_id: str
    title: str
    domain: str
    metadata: _struct_pb2.Struct
    scores: _containers.ScalarMap[str, float]
    def __init__(self, chunk_id: _Optional[str] = ..., content: _Optional[str] = ..., score: _Optional[float] = ..., document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., scores: _Optional[_Mapping[str, float]] = ...) -> None: ...

class StageTimings(_message.Message):
    __slots__ = ("embed_ms", "search_ms", "fetch_ms", "total_ms")
    EMBED_MS_FIELD_NUMBER: _ClassVar[int]
    SEARCH_MS_FIELD_NUMBER: _ClassVar[int]
    FETCH_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    embed_ms: float
    search_ms: float
    fetch_ms: float
    total_ms: float
    def __init__(self, embed_ms: _Optional[float] = ..., search_ms: _Optional[float] = ..., fetch_ms: _Optional[float] = ..., total_ms: _Optional[float] = ...) -> None: ...

class Document(_message.Message):
    __slots__ = ("document_id", "title", "domain", "content", "metadata")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    title: str
    domain: str
    content: str
    metadata: _struct_pb2.Struct
    def __init__(self, document_id: _Optional[str] = ..., title: _Optional[str] = ..., domain: _Optional[str] = ..., content: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class IngestDocumentsRequest(_message.Message):
    __slots__ = ("namespace", "documents")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    DOCUMENTS_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    documents: _containers.RepeatedCompositeFieldContainer[Document]
    def __init__(self, namespace: _Optional[str] = ..., documents: _Optional[_Iterable[_Union[Document, _Mapping]]] = ...) -> None: ...

class IngestDocumentsResponse(_message.Message):
    __slots__ = ("outcomes",)
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[DocumentOutcome]
    def __init__(self, outcomes: _Optional[_Iterable[_Union[DocumentOutcome, _Mapping]]] = ...) -> None: ...

class DocumentOutcome(_message.Message):
    __slots__ = ("document_id", "outcome", "chunks", "error")
    DOCUMENT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    document_id: str
    outcome: Outcome
    chunks: int
    error: str
    def __init__(self, document_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., chunks: _Optional[int] = ..., error: _Optional[str] = ...) -> None: ...

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
    __slots__ = ("dimension", "total_vector_count", "namespaces")
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    TOTAL_VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACES_FIELD_NUMBER: _ClassVar[int]
    dimension: int
    total_vector_count: int
    namespaces: _containers.RepeatedCompositeFieldContainer[NamespaceStats]
    def __init__(self, dimension: _Optional[int] = ..., total_vector_count: _Optional[int] = ..., namespaces: _Optional[_Iterable[_Union[NamespaceStats, _Mapping]]] = ...) -> None: ...

class NamespaceStats(_message.Message):
    __slots__ = ("namespace", "vector_count", "chunk_count")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    VECTOR_COUNT_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    namespace: str
    vector_count: int
    chunk_count: int
    def __init__(self, namespace: _Optional[str] = ..., vector_count: _Optional[int] = ..., chunk_count: _Optional[int] = ...) -> None: ...

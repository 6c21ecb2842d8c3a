"""A retrieval's request (its options among them) and result, as ``retrieval.v1`` messages
and back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from retrieval.domain.models import (
    MatchStatistics,
    QueryRewrite,
    RetrievalMatch,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
    validated,
)
from retrieval.domain.stage_names import StageName
from retrieval.grpc.proto_values import (
    metadata_from_struct,
    metadata_to_struct,
    optional_field,
    optional_namespace,
    present,
    set_present,
)
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def retrieve_request(
    query: str,
    domains: Sequence[str],
    top_k: int | None,
    confidence_threshold: float | None,
    namespace: str | None,
    options: RetrievalOptions | None = None,
    source_prefix: str | None = None,
    section: str | None = None,
) -> pb.RetrieveRequest:
    request = pb.RetrieveRequest(query=query, domains=domains, namespace=namespace or "")
    set_present(
        request,
        {
            "top_k": top_k,
            "confidence_threshold": confidence_threshold,
            "source_prefix": source_prefix,
            "section": section,
        },
    )
    if options is not None:
        options_to_proto(options, request.options)
    return request


def options_to_proto(options: RetrievalOptions, message: pb.RetrievalOptions) -> None:
    """Set the fields of the options the request sets; the others stay absent."""
    set_present(message, options.model_dump(mode="json"), prefix="options.")


def options_from_proto(message: pb.RetrievalOptions) -> dict[str, Any]:
    """The options a request's message carries, by the names ``RetrievalOptions`` gives them."""
    return present(message, RetrievalOptions.model_fields)


def query_request(query: RetrievalQuery) -> pb.RetrieveRequest:
    return retrieve_request(
        query.query,
        query.domains,
        query.top_k,
        query.confidence_threshold,
        query.namespace,
        query.options,
        query.source_prefix,
        query.section,
    )


def query_from_proto(request: pb.RetrieveRequest) -> RetrievalQuery:
    """The request as a query; absent fields keep the model's defaults, an empty namespace
    means the service's default."""
    return validated(
        RetrievalQuery,
        query=request.query,
        domains=tuple(request.domains),
        namespace=optional_namespace(request.namespace),
        options=options_from_proto(request.options),
        **present(request, ("top_k", "confidence_threshold", "source_prefix", "section")),
    )


def result_to_proto(result: RetrievalResult) -> pb.RetrieveResponse:
    timings = result.timings
    return pb.RetrieveResponse(
        matches=[
            pb.RetrievalMatch(
                chunk_id=match.chunk_id,
                content=match.content,
                score=match.score,
                scores=match.scores,
                document_id=match.document_id,
                title=match.title,
                domain=match.domain,
                metadata=metadata_to_struct(match.metadata),
                source=match.source,
                file_type=match.file_type,
                section=match.section,
                pages=match.pages,
            )
            for match in result.matches
        ],
        query=result.query,
        namespace=result.namespace,
        total_matches=result.total_matches,
        timings=pb.StageTimings(
            embed_ms=timings.embed_ms,
            search_ms=timings.search_ms,
            fetch_ms=timings.fetch_ms,
            total_ms=timings.total_ms,
        ),
        stage_ms=timings.stages,
        query_truncated=result.query_truncated,
        degraded=result.degraded,
        cached=result.cached,
        statistics=pb.MatchStatistics(**result.statistics.model_dump()),
        rewrites=[pb.QueryRewrite(**rewrite.model_dump()) for rewrite in result.rewrites],
        query_used=result.query_used,
    )


def stages_from_proto(response: pb.RetrieveResponse) -> dict[str, float]:
    """Per-stage milliseconds; a server older than ``stage_ms`` sends only the fixed fields."""
    if response.stage_ms:
        return dict(response.stage_ms)
    timings = response.timings
    named = {
        StageName.EMBED: timings.embed_ms,
        StageName.SEARCH: timings.search_ms,
        StageName.FETCH: timings.fetch_ms,
    }
    return {name: ms for name, ms in named.items() if ms}


def result_from_proto(response: pb.RetrieveResponse) -> RetrievalResult:
    matches = tuple(
        RetrievalMatch(
            chunk_id=match.chunk_id,
            content=match.content,
            score=match.score,
            scores=dict(match.scores),
            document_id=match.document_id,
            title=match.title,
            domain=match.domain,
            metadata=metadata_from_struct(match.metadata),
            source=optional_field(match, "source"),
            file_type=optional_field(match, "file_type"),
            section=match.section,
            pages=tuple(match.pages),
        )
        for match in response.matches
    )
    return RetrievalResult(
        matches=matches,
        query=response.query,
        namespace=response.namespace,
        total_matches=response.total_matches,
        timings=StageTimings(
            stages=stages_from_proto(response), total_ms=response.timings.total_ms
        ),
        query_truncated=response.query_truncated,
        degraded=tuple(response.degraded),
        cached=response.cached,
        statistics=(
            statistics_from_proto(response.statistics)
            if response.HasField("statistics")
            else MatchStatistics.of([match.score for match in matches])
        ),
        rewrites=tuple(
            QueryRewrite(
                attempt=rewrite.attempt,
                method=rewrite.method,
                query=rewrite.query,
                reason=rewrite.reason,
                error=optional_field(rewrite, "error"),
                best_cosine=optional_field(rewrite, "best_cosine"),
            )
            for rewrite in response.rewrites
        ),
        query_used=response.query_used,
    )


def statistics_from_proto(statistics: pb.MatchStatistics) -> MatchStatistics:
    return MatchStatistics(
        matches=statistics.matches,
        **present(statistics, ("mean_score", "max_score", "min_score")),
    )

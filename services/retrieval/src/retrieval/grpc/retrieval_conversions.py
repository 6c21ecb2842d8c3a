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
    optional_namespace,
    plain_fields,
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
        **result.model_dump(exclude={"timings"}),
        timings=pb.StageTimings(
            embed_ms=timings.embed_ms,
            search_ms=timings.search_ms,
            fetch_ms=timings.fetch_ms,
            total_ms=timings.total_ms,
            round_trips=timings.round_trips,
        ),
        stage_ms=timings.stages,
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
            **plain_fields(match, RetrievalMatch), metadata=metadata_from_struct(match.metadata)
        )
        for match in response.matches
    )
    return RetrievalResult(
        **plain_fields(response, RetrievalResult),
        matches=matches,
        timings=StageTimings(
            stages=stages_from_proto(response),
            total_ms=response.timings.total_ms,
            round_trips=dict(response.timings.round_trips),
        ),
        statistics=(
            statistics_from_proto(response.statistics)
            if response.HasField("statistics")
            else MatchStatistics.of([match.score for match in matches])
        ),
        rewrites=tuple(
            QueryRewrite(**plain_fields(rewrite, QueryRewrite)) for rewrite in response.rewrites
        ),
    )


def statistics_from_proto(statistics: pb.MatchStatistics) -> MatchStatistics:
    return MatchStatistics(
        matches=statistics.matches,
        **present(statistics, ("mean_score", "max_score", "min_score")),
    )

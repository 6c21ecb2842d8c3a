"""A retrieval's result crosses the wire and comes back equal, every kind of field in it."""

from __future__ import annotations

from retrieval.domain.models import (
    MatchStatistics,
    QueryRewrite,
    RetrievalMatch,
    RetrievalResult,
    StageTimings,
)
from retrieval.grpc.proto_values import plain_fields
from retrieval.grpc.retrieval_conversions import result_from_proto, result_to_proto
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def match(n: int, **fields: object) -> RetrievalMatch:
    return RetrievalMatch(
        chunk_id=f"doc-{n}#0000",
        content=f"text {n}",
        score=1.0 / (n + 1),
        scores={"dense": 0.5, "keyword": 2.5},
        document_id=f"doc-{n}",
        title=f"Title {n}",
        domain="plant_diseases",
        **fields,
    )


def test_a_result_comes_back_equal_with_absent_and_present_optional_fields() -> None:
    matches = (
        match(0, metadata={"year": 2020, "tags": ["a", "b"], "ratio": 0.25}, pages=(3, 4)),
        match(1, source="/kb/a.md", file_type="md", section="Intro"),
    )
    result = RetrievalResult(
        matches=matches,
        query="what causes blister blight",
        namespace="ns",
        total_matches=2,
        timings=StageTimings(stages={"embed": 2.0}, total_ms=3.0, round_trips={"cache": 1}),
        degraded=("keyword",),
        statistics=MatchStatistics.of([m.score for m in matches]),
        rewrites=(
            QueryRewrite(attempt=1, method="llm", query="blister blight", reason="weak"),
            QueryRewrite(
                attempt=2, method="rocchio", query="q", reason="weak", error="x", best_cosine=0.4
            ),
        ),
        query_used="blister blight",
    )
    assert result_from_proto(result_to_proto(result)) == result


def test_plain_fields_read_each_kind_of_field_as_the_model_takes_it() -> None:
    message = pb.RetrievalMatch(chunk_id="c", scores={"dense": 0.5}, pages=[2, 3])
    fields = plain_fields(message, RetrievalMatch)
    assert fields["scores"] == {"dense": 0.5}
    assert fields["pages"] == (2, 3)
    assert fields["source"] is None
    assert fields["chunk_id"] == "c"
    assert "metadata" not in fields
    message.source = ""
    assert plain_fields(message, RetrievalMatch)["source"] == ""

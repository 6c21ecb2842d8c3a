"""Each search option is declared once: the request's overrides and the proto's options
message follow ``SearchOptions``, field for field."""

from __future__ import annotations

from enum import StrEnum

import pytest
from google.protobuf.descriptor import FieldDescriptor
from pydantic import ValidationError

from retrieval.domain.search_plan import RetrievalOptions, SearchOptions, SearchPlan
from retrieval.errors import InvalidRequestError
from retrieval.grpc.retrieval_conversions import options_from_proto, options_to_proto
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

PROTO_TYPES = {
    bool: FieldDescriptor.TYPE_BOOL,
    int: FieldDescriptor.TYPE_INT32,
    float: FieldDescriptor.TYPE_DOUBLE,
}
EVERY_OPTION_SET = RetrievalOptions(
    mode="dense",
    fusion="rrf",
    dense_weight=0.5,
    keyword_weight=2.0,
    fetch_k=50,
    mmr_lambda=0.7,
    max_per_document=1,
    rerank=True,
    redundancy_threshold=0.9,
    neighbours=1,
    rewrite=True,
    rewrite_threshold=0.8,
    llm_filter=True,
    second_hop=False,
    graph=True,
    graph_hops=1,
    graph_weight=3.0,
)


def test_every_option_a_request_may_set_is_unset_until_it_does() -> None:
    assert list(RetrievalOptions.model_fields) == list(SearchOptions.model_fields)
    for name, option in SearchOptions.model_fields.items():
        override = RetrievalOptions.model_fields[name]
        assert override.default is None
        assert override.annotation == option.annotation | None
        assert (override.description, override.metadata) == (option.description, option.metadata)
        assert option.title
        assert option.description


@pytest.mark.parametrize(
    "bad", [{"fetch_k": 0}, {"graph_hops": 3}, {"redundancy_threshold": 0}, {"mode": "fuzzy"}]
)
def test_the_request_and_the_settings_refuse_the_same_values(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        RetrievalOptions(**bad)
    with pytest.raises(ValidationError):
        SearchPlan(**bad)


def test_a_plan_takes_the_options_a_request_sets_and_keeps_the_others() -> None:
    plan = SearchPlan(rrf_k=10, fetch_k=7).resolve(RetrievalOptions(mode="dense", fetch_k=20))
    assert (plan.mode, plan.fetch_k, plan.rrf_k) == ("dense", 20, 10)
    assert (
        SearchPlan().resolve(EVERY_OPTION_SET).model_dump(include=set(SearchOptions.model_fields))
        == EVERY_OPTION_SET.model_dump()
    )
    with pytest.raises(InvalidRequestError, match="keyword_weight"):
        SearchPlan().resolve(RetrievalOptions(dense_weight=0, keyword_weight=0))


def test_the_proto_carries_every_option_as_an_optional_field_of_its_type() -> None:
    fields = pb.RetrievalOptions.DESCRIPTOR.fields_by_name
    assert set(fields) == set(SearchOptions.model_fields)
    for name, option in SearchOptions.model_fields.items():
        annotation = option.annotation
        expected = (
            FieldDescriptor.TYPE_STRING
            if isinstance(annotation, type) and issubclass(annotation, StrEnum)
            else PROTO_TYPES[annotation]
        )
        assert (fields[name].type, fields[name].has_presence) == (expected, True), name


@pytest.mark.parametrize("options", [RetrievalOptions(), EVERY_OPTION_SET])
def test_options_cross_the_wire_unchanged(options: RetrievalOptions) -> None:
    message = pb.RetrievalOptions()
    options_to_proto(options, message)
    assert RetrievalOptions(**options_from_proto(message)) == options

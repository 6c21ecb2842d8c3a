"""The query form as a retrieval request, and the stages of a result as bars."""

from __future__ import annotations

import pytest
from starlette.datastructures import QueryParams

from retrieval.console.views.query import SWITCH, option_fields, retrieval_query, stage_bars
from retrieval.domain.models import FusionMethod, RetrievalOptions, SearchMode, StageTimings
from retrieval.domain.search_plan import SearchOptions
from retrieval.errors import InvalidRequestError
from retrieval.settings import Settings


def test_empty_fields_take_the_service_s_settings() -> None:
    query = retrieval_query(QueryParams("query=frost&namespace=&top_k=&mode=&rerank="))
    assert (query.query, query.namespace, query.top_k) == ("frost", None, 5)
    assert query.options == RetrievalOptions()


def test_every_field_reaches_the_request() -> None:
    params = QueryParams(
        "query=frost&namespace=tea&top_k=3&confidence_threshold=0.2&source_prefix=https://kb.example/x"
        "&section=Protection&domain=weather_patterns&domain=plant_diseases,+soil&mode=hybrid"
        "&fusion=rrf&dense_weight=0.5&keyword_weight=2&fetch_k=50&mmr_lambda=0.7"
        "&max_per_document=1&rerank=true&redundancy_threshold=0.95&neighbours=1&rewrite=false"
        "&rewrite_threshold=0.8&llm_filter=true"
    )
    query = retrieval_query(params)
    assert (query.namespace, query.top_k, query.confidence_threshold) == ("tea", 3, 0.2)
    assert (query.source_prefix, query.section) == ("https://kb.example/x", "Protection")
    assert query.domains == ("weather_patterns", "plant_diseases", "soil")
    assert query.options == RetrievalOptions(
        mode=SearchMode.HYBRID,
        fusion=FusionMethod.RRF,
        dense_weight=0.5,
        keyword_weight=2,
        fetch_k=50,
        mmr_lambda=0.7,
        max_per_document=1,
        rerank=True,
        redundancy_threshold=0.95,
        neighbours=1,
        rewrite=False,
        rewrite_threshold=0.8,
        llm_filter=True,
    )


@pytest.mark.parametrize(
    ("field", "value"), [("fetch_k", "0"), ("top_k", "many"), ("mode", "fuzzy")]
)
def test_a_bad_field_is_named(field: str, value: str) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        retrieval_query(QueryParams({"query": "frost", field: value}))


def test_the_form_offers_every_option_with_its_setting() -> None:
    settings = Settings(_env_file=None, search={"rerank": True, "graph_hops": 1})
    fields = {field.name: field for field in option_fields(settings)}
    assert list(fields) == list(SearchOptions.model_fields) == list(RetrievalOptions.model_fields)
    for name, option in SearchOptions.model_fields.items():
        assert (fields[name].label, fields[name].help) == (option.title, option.description)
    assert (fields["rerank"].default, fields["second_hop"].default) == ("on", "on")
    assert (fields["rerank"].choices, fields["graph"].default) == (SWITCH, "off")
    assert (fields["graph_hops"].default, fields["graph_hops"].step) == ("1", "1")
    assert (fields["dense_weight"].default, fields["dense_weight"].step) == ("1.0", "any")
    assert (fields["mode"].default, fields["fusion"].default) == ("hybrid", "dbsf")
    assert fields["mode"].choices == (
        ("hybrid", "hybrid"),
        ("dense", "dense"),
        ("keyword", "keyword"),
    )


def test_each_stage_s_bar_is_its_share_of_the_longest_time() -> None:
    timings = StageTimings(stages={"embed": 5.0, "search": 8.0, "fetch": 0.0}, total_ms=10.0)
    assert stage_bars(timings) == [("embed", 5.0, 50.0), ("search", 8.0, 80.0), ("fetch", 0.0, 0.0)]
    assert stage_bars(StageTimings()) == []

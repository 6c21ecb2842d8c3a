"""Settings read from the environment refuse a bad value with ``ValidationError``; each search
option is read from the variable it always had."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from retrieval.domain.models import FusionMethod, SearchMode
from retrieval.domain.search_plan import SearchPlan
from retrieval.settings import SEARCH_VARIABLES, Settings


@pytest.mark.parametrize("value", ["", "plant_diseases", "[plant_diseases", '{"a": 1}', '"tea"'])
def test_allowed_domains_that_are_no_json_list_are_a_validation_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", value)
    with pytest.raises(ValidationError, match="allowed_domains"):
        Settings(_env_file=None)


@pytest.mark.parametrize("value", ["0x10", '{"mode": "dense"}'])
def test_a_variable_named_for_the_whole_search_plan_is_a_validation_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RETRIEVAL_SEARCH", value)
    with pytest.raises(ValidationError, match="search"):
        Settings(_env_file=None)


def test_allowed_domains_are_read_as_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", '["plant_diseases", "frost"]')
    assert Settings(_env_file=None).allowed_domains == ("plant_diseases", "frost")
    assert Settings(_env_file=None, allowed_domains=("tea",)).allowed_domains == ("tea",)


OLD_SEARCH_VARIABLES = {
    "RETRIEVAL_SEARCH_MODE": ("mode", "dense", SearchMode.DENSE),
    "RETRIEVAL_SEARCH_FUSION": ("fusion", "rrf", FusionMethod.RRF),
    "RETRIEVAL_SEARCH_DENSE_WEIGHT": ("dense_weight", "0.5", 0.5),
    "RETRIEVAL_SEARCH_KEYWORD_WEIGHT": ("keyword_weight", "2", 2.0),
    "RETRIEVAL_SEARCH_FETCH_K": ("fetch_k", "40", 40),
    "RETRIEVAL_SEARCH_RRF_K": ("rrf_k", "20", 20),
    "RETRIEVAL_SEARCH_MMR_LAMBDA": ("mmr_lambda", "0.6", 0.6),
    "RETRIEVAL_SEARCH_MAX_PER_DOCUMENT": ("max_per_document", "2", 2),
    "RETRIEVAL_SEARCH_REDUNDANCY_THRESHOLD": ("redundancy_threshold", "0.9", 0.9),
    "RETRIEVAL_SEARCH_NEIGHBOURS": ("neighbours", "1", 1),
    "RETRIEVAL_SEARCH_RERANK": ("rerank", "true", True),
    "RETRIEVAL_SEARCH_RERANK_DEPTH": ("rerank_depth", "20", 20),
    "RETRIEVAL_SEARCH_REWRITE": ("rewrite", "true", True),
    "RETRIEVAL_SEARCH_REWRITE_THRESHOLD": ("rewrite_threshold", "0.7", 0.7),
    "RETRIEVAL_SEARCH_REWRITE_ATTEMPTS": ("rewrite_attempts", "3", 3),
    "RETRIEVAL_SEARCH_LLM_FILTER": ("llm_filter", "true", True),
    "RETRIEVAL_LLM_FILTER_BATCH": ("llm_filter_batch", "4", 4),
    "RETRIEVAL_LLM_FILTER_CONCURRENCY": ("llm_filter_concurrency", "3", 3),
    "RETRIEVAL_SEARCH_SECOND_HOP": ("second_hop", "false", False),
    "RETRIEVAL_SEARCH_GRAPH": ("graph", "true", True),
    "RETRIEVAL_SEARCH_GRAPH_HOPS": ("graph_hops", "1", 1),
    "RETRIEVAL_SEARCH_GRAPH_WEIGHT": ("graph_weight", "3", 3.0),
    "RETRIEVAL_QUERY_MAX_WORDS": ("query_max_words", "100", 100),
}
"""Every variable of a search option before the options were grouped, a value unlike its
default, and the option's value it sets."""


@pytest.fixture
def no_search_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in OLD_SEARCH_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


def test_every_search_option_has_kept_its_variable() -> None:
    assert {option for option, _, _ in OLD_SEARCH_VARIABLES.values()} == set(
        SearchPlan.model_fields
    )
    assert {f"RETRIEVAL_{name.upper()}" for name in SEARCH_VARIABLES.values()} == set(
        OLD_SEARCH_VARIABLES
    )


@pytest.mark.usefixtures("no_search_variables")
@pytest.mark.parametrize("variable", sorted(OLD_SEARCH_VARIABLES))
def test_each_search_variable_sets_its_option(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    option, text, value = OLD_SEARCH_VARIABLES[variable]
    assert getattr(SearchPlan(), option) != value
    monkeypatch.setenv(variable, text)
    assert getattr(Settings(_env_file=None).search, option) == value


@pytest.mark.usefixtures("no_search_variables")
def test_search_variables_are_read_from_the_env_file_below_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text(
        "".join(f"{variable}={text}\n" for variable, (_, text, _) in OLD_SEARCH_VARIABLES.items())
    )
    from_file = Settings(_env_file=env_file).search
    assert all(
        getattr(from_file, option) == value for option, _, value in OLD_SEARCH_VARIABLES.values()
    )
    monkeypatch.setenv("RETRIEVAL_SEARCH_FETCH_K", "7")
    monkeypatch.setenv("RETRIEVAL_QUERY_MAX_WORDS", "9")
    overridden = Settings(_env_file=env_file).search
    assert (overridden.fetch_k, overridden.query_max_words, overridden.rrf_k) == (7, 9, 20)
    given = Settings(_env_file=env_file, search={"fetch_k": 5}).search
    assert (given.fetch_k, given.query_max_words) == (5, 9)

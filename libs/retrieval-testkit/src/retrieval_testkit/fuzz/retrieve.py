"""Retrieval requests in process: ``retrieve(...)`` with raw arguments, and ``retrieve_query``
with a ``RetrievalQuery`` built from raw fields. A model refusing its fields at the boundary
(``ValidationError``) is fine; past it only ``InvalidRequestError`` and ``NotFoundError`` may
come out, and a result holds at most ``top_k`` matches with finite scores, from the namespace
asked."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval.domain.models import (
    DEFAULT_DOMAINS,
    MAX_FETCH_K,
    MAX_TOP_K,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    SearchMode,
)
from retrieval.domain.ranking.fusion import FusionMethod
from retrieval.errors import InvalidRequestError, NotFoundError
from retrieval.lifecycle import Application
from retrieval_testkit.fuzz.apps import NAMESPACES, seeded_application
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target, boundary
from retrieval_testkit.fuzz.strategies import (
    domains,
    mostly,
    numbers,
    scalars,
    slugs,
    texts,
    words,
)

QUERY_FIELDS = ("query", "domains", "top_k", "confidence_threshold", "namespace")
VALID_OPTIONS: dict[str, st.SearchStrategy[Any]] = {
    "mode": st.sampled_from([mode.value for mode in SearchMode]),
    "fusion": st.sampled_from([method.value for method in FusionMethod]),
    "dense_weight": st.floats(0, 10),
    "keyword_weight": st.floats(0, 10),
    "fetch_k": st.integers(1, MAX_FETCH_K),
    "mmr_lambda": st.floats(0, 1),
    "max_per_document": st.integers(0, MAX_TOP_K),
    "rerank": st.booleans(),
    "redundancy_threshold": st.floats(0, 1, exclude_min=True),
    "neighbours": st.integers(0, 10),
    "rewrite": st.booleans(),
    "rewrite_threshold": st.floats(0, 1),
    "llm_filter": st.booleans(),
}


def options() -> st.SearchStrategy[dict[str, Any]]:
    """Raw switches: any subset of the fields, each valid mostly, hostile now and then."""
    return st.fixed_dictionaries(
        {},
        optional={
            name: mostly(valid, st.one_of(numbers(), scalars()), odds=12)
            for name, valid in VALID_OPTIONS.items()
        },
    )


def requests() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "via": st.sampled_from(["arguments", "query"]),
            "query": mostly(words(), texts(300), odds=2),
            "domains": mostly(
                st.lists(st.sampled_from(DEFAULT_DOMAINS), max_size=3, unique=True),
                st.lists(domains(), max_size=4),
            ),
            "top_k": mostly(st.integers(1, MAX_TOP_K), numbers()),
            "confidence_threshold": mostly(
                st.sampled_from([0.0, 0.0, 0.1, 0.3]), st.one_of(st.floats(0, 1), numbers())
            ),
            "namespace": mostly(st.sampled_from(NAMESPACES), st.one_of(st.none(), slugs())),
            "options": options(),
        }
    )


def check_result(result: RetrievalResult, query: RetrievalQuery, app: Application) -> None:
    assert result.total_matches == len(result.matches) <= query.top_k, result
    assert result.namespace == (query.namespace or app.settings.default_namespace), result
    assert all(math.isfinite(match.score) for match in result.matches), result


def as_query(case: dict[str, Any], switches: RetrievalOptions) -> RetrievalQuery:
    """The query ``retrieve`` builds of its arguments."""
    fields = {name: case[name] for name in QUERY_FIELDS}
    return RetrievalQuery.model_validate(
        {**fields, "namespace": case["namespace"] or None, "options": switches}
    )


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    with runner.entered(seeded_application()) as app:

        def check(case: dict[str, Any]) -> None:
            switches = boundary(lambda: RetrievalOptions.model_validate(case["options"]))
            try:
                query: RetrievalQuery | None = as_query(case, switches)
            except ValidationError:
                query = None
            if case["via"] == "arguments":
                arguments = {name: case[name] for name in QUERY_FIELDS}
                result = runner.run(app.retrieval.retrieve(**arguments, options=switches))
                assert query is not None, "retrieve() took arguments RetrievalQuery refuses"
            elif query is None:
                raise RefusedError("RetrievalQuery")
            else:
                result = runner.run(app.retrieval.retrieve_query(query))
            check_result(result, query, app)

        yield check


TARGET = Target(
    name="retrieve",
    strategy=requests(),
    allowed=(InvalidRequestError, NotFoundError),
    session=session,
)

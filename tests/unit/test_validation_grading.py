"""Validation's pure parts: case files, the grading of one answer, and the report's figures."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.models import RagChunk, RetrievalMatch
from retrieval.domain.validation import (
    CaseSource,
    QueryType,
    ValidationCase,
    parse_case_file,
    smoke_cases,
)
from retrieval.domain.validation_grading import (
    grade,
    low_score,
    missing_documents,
    missing_keywords,
)
from retrieval.domain.validation_report import (
    NamespaceSurvey,
    QueryOutcome,
    ScoreStatistics,
    ValidationReport,
    success_rate,
    summarise,
)
from retrieval.errors import InvalidRequestError


def match(
    document_id: str, content: str = "text", cosine: float | None = 0.5, score: float = 1.0
) -> RetrievalMatch:
    return RetrievalMatch(
        chunk_id=f"{document_id}#0",
        content=content,
        score=score,
        scores={} if cosine is None else {"dense": cosine},
        document_id=document_id,
        title=document_id,
        domain="plant_diseases",
    )


def chunk(document_id: str, position: int, **metadata: str) -> RagChunk:
    return RagChunk(
        chunk_id=f"{document_id}#{position}",
        document_id=document_id,
        namespace="ns",
        title=f"Title of {document_id}",
        domain="plant_diseases",
        position=position,
        content="text",
        metadata=metadata,
    )


def outcome(kind: QueryType, passed: bool, top_score: float | None = None) -> QueryOutcome:
    case = ValidationCase(query="q", query_type=kind)
    return QueryOutcome.of(case, 0, () if passed else ("failed",), top_score)


def report_of(outcomes: list[QueryOutcome], criterion: float = 0.8) -> ValidationReport:
    return summarise(
        "ns",
        CaseSource.CASES,
        outcomes,
        criterion=criterion,
        top_k=5,
        vector_count=10,
        chunk_count=10,
        completeness=(1.0, {}),
    )


# case files


def test_a_case_file_is_a_list_of_cases_or_an_object_with_expected_metadata() -> None:
    listed = parse_case_file(json.dumps([{"query": "blister blight"}]))
    assert listed.cases == (ValidationCase(query="blister blight"),)
    assert listed.expected_metadata == ()
    assert listed.cases[0].query_type is QueryType.FACTUAL

    wrapped = parse_case_file(
        json.dumps(
            {
                "cases": [
                    {
                        "id": "frost-1",
                        "query": "frost on bushes",
                        "expected_document_ids": ["frost"],
                        "expected_keywords": ["thatch", "shade"],
                        "min_score": 0.7,
                        "query_type": "procedural",
                        "domains": ["weather_patterns"],
                    }
                ],
                "expected_metadata": ["region", "source"],
            }
        )
    )
    [case] = wrapped.cases
    assert (case.id, case.query_type, case.min_score) == ("frost-1", QueryType.PROCEDURAL, 0.7)
    assert case.domains == ("weather_patterns",)
    assert wrapped.expected_metadata == ("region", "source")


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        pytest.param('[{"query": "a"},\n {"query": }]', "cases", "line 2", id="syntax"),
        pytest.param('[{"query": "a"}, {"id": "x"}]', "cases.1.query", "required", id="no-query"),
        pytest.param('[{"query": ""}]', "cases.0.query", "at least 1", id="empty-query"),
        pytest.param(
            '[{"query": "a", "query_type": "opinion"}]', "cases.0.query_type", "", id="type"
        ),
        pytest.param('[{"query": "a", "min_score": 2}]', "cases.0.min_score", "", id="score"),
        pytest.param('[{"query": "a", "expected": ["x"]}]', "cases.0.expected", "", id="extra"),
        pytest.param(
            '[{"query": "a", "domains": ["Not A Domain"]}]', "cases.0.domains.0", "", id="domain"
        ),
        pytest.param("[]", "cases", "at least 1", id="no-cases"),
        pytest.param('{"expected_metadata": []}', "cases", "required", id="object-no-cases"),
        pytest.param('"frost"', "cases", "list of cases", id="a-string"),
    ],
)
def test_a_malformed_case_file_names_the_field_or_line(text: str, field: str, message: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        parse_case_file(text)
    assert raised.value.field == field
    assert message in str(raised.value)


# grading one answer


def test_an_expected_document_in_the_top_k_passes_and_one_missing_says_what_came_instead() -> None:
    found = [match("monsoon"), match("frost"), match("monsoon")]
    assert missing_documents(["frost", "hail"], found, 5, True) is None
    assert (
        missing_documents(["blister-blight"], found, 5, True)
        == "expected document blister-blight not in top 5 (found monsoon, frost)"
    )
    assert (
        missing_documents(["a", "b"], [], 3, False)
        == "expected documents a, b not in top 3 (found nothing)"
    )


def test_an_expected_document_found_without_a_cosine_has_lost_its_vectors() -> None:
    lost = (
        "expected document frost found by keyword search only: its chunks have no vectors "
        "(no cosine similarity)"
    )
    hybrid = [match("monsoon", cosine=0.4), match("frost", cosine=None)]
    assert missing_documents(["frost"], hybrid, 5, cosines_expected=True) == lost
    assert missing_documents(["frost"], hybrid[1:], 1, cosines_expected=True) == lost
    assert missing_documents(["frost", "monsoon"], hybrid, 5, cosines_expected=True) is None
    keyword_mode = [match("monsoon", cosine=None), match("frost", cosine=None)]
    assert missing_documents(["frost"], keyword_mode, 5, cosines_expected=False) is None


def test_half_the_keywords_in_the_top_three_texts_pass_case_insensitively() -> None:
    matches = [
        match("a", "Blister BLIGHT spreads"),
        match("b", "in wet weather"),
        match("c", "copper sprays"),
        match("d", "shade trees and pruning"),
    ]
    keywords = ["blight", "Wet", "copper", "shade", "pruning", "hail"]
    assert missing_keywords(keywords, matches) is None
    assert (
        missing_keywords(["blight", "shade", "pruning", "hail", "frost", "thatch"], matches)
        == "1 of 6 keywords in the top 3; missing: shade, pruning, hail, frost, thatch"
    )
    assert missing_keywords(["blight", "hail"], matches) is None
    assert missing_keywords([], []) is None


def test_min_score_reads_the_top_match_cosine_not_its_fused_score() -> None:
    assert low_score(0.75, [match("a", cosine=0.8, score=0.01)]) is None
    assert low_score(0.75, [match("a", cosine=0.61, score=3.5)]) == "top score 0.6100 < 0.75"
    assert low_score(0.75, []) == "nothing returned (min_score 0.75)"
    assert "no cosine similarity" in (low_score(0.75, [match("a", cosine=None)]) or "")
    assert low_score(None, []) is None


def test_a_case_gathers_every_reason_it_fails() -> None:
    case = ValidationCase(
        query="frost",
        expected_document_ids=("frost",),
        expected_keywords=("thatch", "shade"),
        min_score=0.9,
    )
    found = [match("monsoon", "rain", cosine=0.3)]
    reasons = grade(case, found, 5, degraded=("keyword",), cosines_expected=True)
    assert reasons == (
        "degraded: keyword failed and the rest answered",
        "expected document frost not in top 5 (found monsoon)",
        "0 of 2 keywords in the top 3; missing: thatch, shade",
        "top score 0.3000 < 0.9",
    )
    assert grade(ValidationCase(query="anything"), [], 5, degraded=(), cosines_expected=True) == ()


documents = st.sampled_from(["a", "b", "c", "d"])
cosines = st.one_of(st.none(), st.floats(-1, 1))
matches = st.lists(
    st.builds(match, documents, st.sampled_from(["Frost", "thatch shade", "rain"]), cosines),
    max_size=6,
)
cases = st.builds(
    ValidationCase,
    query=st.just("q"),
    expected_document_ids=st.lists(documents, max_size=2).map(tuple),
    expected_keywords=st.lists(st.sampled_from(["frost", "shade", "hail"]), max_size=3).map(tuple),
    min_score=st.one_of(st.none(), st.floats(-1, 1)),
)


@given(
    cases,
    matches,
    st.integers(1, 6),
    st.lists(st.sampled_from(["dense", "keyword"])),
    st.booleans(),
)
def test_a_case_passes_exactly_when_every_check_passes(
    case: ValidationCase,
    found: list[RetrievalMatch],
    top_k: int,
    degraded: list[str],
    cosines_expected: bool,
) -> None:
    checks = [
        not degraded,
        not case.expected_document_ids
        or missing_documents(case.expected_document_ids, found, top_k, cosines_expected) is None,
        missing_keywords(case.expected_keywords, found) is None,
        low_score(case.min_score, found) is None,
    ]
    reasons = grade(case, found, top_k, degraded=degraded, cosines_expected=cosines_expected)
    assert (reasons == ()) == all(checks)
    assert len(reasons) == checks.count(False)


# the report's figures


@given(st.integers(0, 1000), st.integers(0, 1000))
def test_success_rate_is_passed_over_total_within_zero_and_one(passed: int, extra: int) -> None:
    total = passed + extra
    rate = success_rate(passed, total)
    assert 0 <= rate <= 1
    assert rate == (passed / total if total else 0.0)


outcomes = st.lists(
    st.builds(outcome, st.sampled_from(QueryType), st.booleans(), cosines), max_size=20
)


@given(outcomes, st.floats(0, 1))
def test_the_report_adds_up(collected: list[QueryOutcome], criterion: float) -> None:
    report = report_of(collected, criterion)
    assert report.total_queries == len(collected)
    assert report.passed_queries + len(report.failed_queries) == report.total_queries
    assert report.success_rate == success_rate(report.passed_queries, report.total_queries)
    assert report.passed == (bool(collected) and report.success_rate >= criterion)
    assert sum(group.total for group in report.by_query_type.values()) == len(collected)
    assert sum(group.passed for group in report.by_query_type.values()) == report.passed_queries
    assert all(not failed.passed for failed in report.failed_queries)
    assert report.top_score.count == sum(o.top_score is not None for o in collected)


def test_the_report_breaks_success_down_by_query_type() -> None:
    report = report_of(
        [
            outcome(QueryType.FACTUAL, True, 0.9),
            outcome(QueryType.FACTUAL, False, 0.5),
            outcome(QueryType.EDGE_CASE, True, 0.7),
            outcome(QueryType.FACTUAL, True, None),
        ],
        criterion=0.75,
    )
    assert report.passed
    assert report.success_rate == 0.75
    assert {kind: (g.total, g.passed) for kind, g in report.by_query_type.items()} == {
        "edge_case": (1, 1),
        "factual": (3, 2),
    }
    assert report.by_query_type["factual"].success_rate == pytest.approx(2 / 3)
    scores = report.top_score
    assert (scores.count, scores.median, scores.min, scores.max) == (3, 0.7, 0.5, 0.9)
    assert scores.mean == pytest.approx(0.7)
    assert not report_of(
        [outcome(QueryType.FACTUAL, False)] * 4 + [outcome(QueryType.FACTUAL, True)]
    ).passed


def test_nothing_asked_never_passes_and_has_no_score_figures() -> None:
    report = report_of([], criterion=0.0)
    assert not report.passed
    assert report.success_rate == 0.0
    assert report.top_score == ScoreStatistics(count=0, mean=None, median=None, min=None, max=None)


def test_metadata_completeness_on_the_fields_asked_for_else_every_key_seen() -> None:
    survey = NamespaceSurvey()
    survey.add(
        [
            chunk("a", 0, region="assam", source="manual"),
            chunk("a", 1, region="assam", source="manual"),
            chunk("b", 0, region="nilgiris"),
            chunk("c", 0),
        ]
    )
    assert survey.titles == {"a": "Title of a", "b": "Title of b", "c": "Title of c"}
    assert survey.metadata_completeness(["region"]) == (0.75, {"region": 0.75})
    both = {"region": 0.75, "source": 0.5}
    assert survey.metadata_completeness(["region", "source"]) == (0.5, both)
    assert survey.metadata_completeness([]) == (0.5, both)
    assert survey.metadata_completeness(["owner"]) == (0.0, {"owner": 0.0})
    assert NamespaceSurvey().metadata_completeness([]) == (None, {})
    assert NamespaceSurvey().metadata_completeness(["owner"]) == (None, {"owner": 0.0})


def test_without_metadata_anywhere_every_chunk_is_complete() -> None:
    survey = NamespaceSurvey()
    survey.add([chunk("a", 0), chunk("b", 0)])
    assert survey.metadata_completeness([]) == (1.0, {})


# the smoke set


def test_the_smoke_set_asks_each_title_for_its_document() -> None:
    cases = smoke_cases({"frost": "Frost protection", "blight": "Blister blight"})
    assert [(c.id, c.query, c.expected_document_ids) for c in cases] == [
        ("blight", "Blister blight", ("blight",)),
        ("frost", "Frost protection", ("frost",)),
    ]


@given(st.sets(st.text("abcdef-", min_size=1, max_size=6), max_size=40), st.integers(1, 30))
def test_the_smoke_set_is_capped_and_does_not_depend_on_listing_order(
    ids: set[str], limit: int
) -> None:
    titles = {document: f"title {document}" for document in ids}
    chosen = smoke_cases(titles, limit)
    assert len(chosen) == min(len(ids), limit)
    assert [case.id for case in chosen] == sorted(case.id for case in chosen)
    assert smoke_cases(dict(reversed(list(titles.items()))), limit) == chosen
    assert all(case.expected_document_ids == (case.id,) for case in chosen)
    assert all(case.query == titles[case.id] for case in chosen)

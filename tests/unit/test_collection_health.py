"""The status of a collection from what its audit found: green, yellow or red, and why."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.collection_health import (
    ORPHAN_LABELS,
    HealthStatus,
    Orphans,
    Verdict,
    namespace_verdict,
    overall,
    texts_outside_namespaces,
    unreachable,
    worst,
)

NONE_FOUND = Orphans(**dict.fromkeys(ORPHAN_LABELS, 0))
orphans = st.builds(Orphans, **{kind: st.integers(0, 5) for kind in ORPHAN_LABELS})
statuses = st.sampled_from(HealthStatus)
verdicts = st.builds(
    Verdict, status=statuses, reasons=st.lists(st.text(min_size=1), max_size=2).map(tuple)
)


def test_a_namespace_without_orphans_is_green() -> None:
    assert namespace_verdict("demo", NONE_FOUND) == Verdict(status=HealthStatus.GREEN, reasons=())


def test_each_kind_of_orphan_is_a_reason_naming_the_namespace_and_the_count() -> None:
    found = NONE_FOUND.model_copy(update={"texts_without_vectors": 3, "pending_documents": 1})
    assert namespace_verdict("demo", found) == Verdict(
        status=HealthStatus.YELLOW,
        reasons=("namespace demo: 3 texts without vectors", "namespace demo: 1 pending documents"),
    )


@given(orphans)
def test_a_namespace_is_yellow_exactly_when_something_is_out_of_place(found: Orphans) -> None:
    verdict = namespace_verdict("ns", found)
    out_of_place = [kind for kind in ORPHAN_LABELS if getattr(found, kind)]
    assert len(verdict.reasons) == len(out_of_place)
    assert verdict.status is (HealthStatus.YELLOW if out_of_place else HealthStatus.GREEN)
    for kind, reason in zip(out_of_place, verdict.reasons, strict=True):
        assert reason == f"namespace ns: {getattr(found, kind)} {ORPHAN_LABELS[kind]}"


def test_an_unreachable_store_is_red() -> None:
    verdict = unreachable("stores", "MongoDB unreachable during count")
    assert verdict.status is HealthStatus.RED
    assert verdict.reasons == ("stores: store unreachable: MongoDB unreachable during count",)


def test_texts_beyond_the_namespaces_with_vectors_are_yellow() -> None:
    assert texts_outside_namespaces(10, 10).status is HealthStatus.GREEN
    assert texts_outside_namespaces(12, 10) == Verdict(
        status=HealthStatus.YELLOW, reasons=("2 chunk texts in namespaces that hold no vectors",)
    )


@given(st.lists(verdicts))
def test_overall_is_the_worst_status_with_every_reason_in_order(parts: list[Verdict]) -> None:
    verdict = overall(parts)
    assert verdict.reasons == tuple(reason for part in parts for reason in part.reasons)
    expected = HealthStatus.GREEN
    for candidate in (HealthStatus.YELLOW, HealthStatus.RED):
        if any(part.status is candidate for part in parts):
            expected = candidate
    assert verdict.status is expected


@given(st.lists(statuses, min_size=1))
def test_worst_is_never_better_than_any_status(found: list[HealthStatus]) -> None:
    order = [HealthStatus.GREEN, HealthStatus.YELLOW, HealthStatus.RED]
    assert worst(found) in found
    assert all(order.index(worst(found)) >= order.index(status) for status in found)


def test_nothing_to_judge_is_green() -> None:
    assert worst([]) is HealthStatus.GREEN
    assert overall([]) == Verdict(status=HealthStatus.GREEN, reasons=())

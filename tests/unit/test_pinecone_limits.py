"""Upsert batches stay within Pinecone's limits, in order, and as full as allowed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.adapters.pinecone.limits import (
    MAX_REQUEST_BYTES,
    MAX_UPSERT_RECORDS,
    json_size,
    upsert_batches,
)
from retrieval.domain.vectors import VectorRecord


def record(number: int, notes: int) -> VectorRecord:
    metadata = {"notes": "n" * notes} if notes else {}
    return VectorRecord(id=f"r{number}", values=(0.1 * (number + 1), 1.0, -2.5), metadata=metadata)


@settings(max_examples=30, deadline=None)
@given(
    notes=st.lists(st.sampled_from([0, 10, 20_000, 40_000]), min_size=1, max_size=2500),
    namespace=st.sampled_from(["", "tea", "ns-" + "x" * 100]),
)
def test_batches_are_in_order_within_limits_and_full(notes: list[int], namespace: str) -> None:
    records = [record(number, size) for number, size in enumerate(notes)]
    batches = upsert_batches(records, namespace)
    assert [wire["id"] for batch in batches for wire in batch] == [r.id for r in records]
    for batch, following in zip(batches, [*batches[1:], None], strict=True):
        assert len(batch) <= MAX_UPSERT_RECORDS
        assert json_size({"vectors": batch, "namespace": namespace}) <= MAX_REQUEST_BYTES
        if following is not None:
            fuller = [*batch, following[0]]
            assert (
                len(fuller) > MAX_UPSERT_RECORDS
                or json_size({"vectors": fuller, "namespace": namespace}) > MAX_REQUEST_BYTES
            )


def test_no_records_make_no_batches() -> None:
    assert upsert_batches([], "tea") == []

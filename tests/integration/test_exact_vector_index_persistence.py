"""The embedded index survives a restart and never leaves half a write on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.adapters.exact_vector_index import ExactVectorIndex
from retrieval.domain.vectors import VectorRecord


def record(record_id: str, values: list[float], **metadata) -> VectorRecord:
    return VectorRecord(id=record_id, values=tuple(values), metadata=metadata)


async def test_reopened_index_answers_the_same(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path)
    await index.upsert(
        [
            record("a", [1, 0], domain="x", tags=["t"], n=2, ok=True),
            record("b", [0, 1], domain="y"),
        ],
        namespace="ns",
    )
    await index.upsert([record("c", [1, 1])], namespace="other")
    before = await index.query([1, 0.1], top_k=2, namespace="ns", filter={"tags": "t"})

    reopened = ExactVectorIndex(tmp_path)
    assert await reopened.stats() == await index.stats()
    after = await reopened.query([1, 0.1], top_k=2, namespace="ns", filter={"tags": "t"})
    assert after == before
    assert after[0].metadata == {"domain": "x", "tags": ["t"], "n": 2, "ok": True}


async def test_deleting_a_namespace_removes_its_file(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    await index.delete(namespace="ns", delete_all=True)
    assert not (tmp_path / "ns.npz").exists()
    assert (await ExactVectorIndex(tmp_path).stats()).namespaces == {}


async def test_leftover_temporary_files_are_ignored_and_cleaned(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    (tmp_path / "crashed-write.tmp").write_bytes(b"partial")
    reopened = ExactVectorIndex(tmp_path)
    assert (await reopened.stats()).total_vector_count == 1
    assert not list(tmp_path.glob("*.tmp"))


async def test_a_rejected_write_changes_nothing_on_disk(tmp_path: Path) -> None:
    index = ExactVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    saved = (tmp_path / "ns.npz").read_bytes()
    with pytest.raises(ValueError, match="dimension"):
        await index.upsert([record("b", [1, 0, 0])], namespace="ns")
    assert (tmp_path / "ns.npz").read_bytes() == saved

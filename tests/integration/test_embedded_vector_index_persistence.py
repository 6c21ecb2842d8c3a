"""The embedded index survives a restart, never leaves half a write on disk, and is the only
writer of its directory until it is closed (crash recovery itself: test_vector_index_log)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendError, DataDirectoryInUseError

HOLD_INDEX = """
import sys
from pathlib import Path
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex

index = EmbeddedVectorIndex(Path(sys.argv[1]))
print("open", flush=True)
sys.stdin.read()
"""


MODES = {"exact": {}, "graph": {"ann_min_vectors": 1, "exact_subset_rows": 0}}


def record(record_id: str, values: list[float], **metadata) -> VectorRecord:
    return VectorRecord(id=record_id, values=tuple(values), metadata=metadata)


def files(directory: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in directory.iterdir() if path.name != ".lock"}


@pytest.mark.parametrize("mode", MODES)
async def test_reopened_index_answers_the_same(tmp_path: Path, mode: str) -> None:
    index = EmbeddedVectorIndex(tmp_path, **MODES[mode])
    await index.upsert(
        [
            record("a", [1, 0], domain="x", tags=["t"], n=2, ok=True),
            record("b", [0, 1], domain="y"),
        ],
        namespace="ns",
    )
    await index.upsert([record("c", [1, 1])], namespace="other")
    await index.upsert([record("b", [0.2, 1], domain="y")], namespace="ns")
    await index.delete(namespace="other", ids=["not-there"])
    await index.settle()
    before = await index.query([1, 0.1], top_k=2, namespace="ns", filter={"tags": "t"})
    stats = await index.stats()
    await index.close()

    reopened = EmbeddedVectorIndex(tmp_path, **MODES[mode])
    assert await reopened.stats() == stats
    after = await reopened.query([1, 0.1], top_k=2, namespace="ns", filter={"tags": "t"})
    assert after == before
    assert after[0].metadata == {"domain": "x", "tags": ["t"], "n": 2, "ok": True}
    assert (await reopened.fetch(["b"], "ns"))["b"].values == pytest.approx((0.196, 0.981), 1e-3)
    await reopened.close()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("selector", [{"delete_all": True}, {"ids": ["a", "b"]}])
async def test_deleting_a_namespace_removes_its_files(
    tmp_path: Path, mode: str, selector: dict
) -> None:
    index = EmbeddedVectorIndex(tmp_path, **MODES[mode])
    await index.upsert([record("a", [1, 0]), record("b", [0, 1])], namespace="ns")
    await index.settle()
    await index.upsert([record("c", [1, 1])], namespace="other")
    await index.delete(namespace="other", delete_all=True)
    await index.delete(namespace="ns", **selector)
    await index.close()
    assert set(files(tmp_path)) == {"index.json"}
    assert (await EmbeddedVectorIndex(tmp_path).stats()).namespaces == {}


async def test_leftover_temporary_files_are_ignored_and_cleaned(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    await index.close()
    (tmp_path / "crashed-write.tmp").write_bytes(b"partial")
    reopened = EmbeddedVectorIndex(tmp_path)
    assert (await reopened.stats()).total_vector_count == 1
    assert not list(tmp_path.glob("*.tmp"))


async def test_a_rejected_write_changes_nothing_on_disk(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    saved = files(tmp_path)
    with pytest.raises(ValueError, match="dimension"):
        await index.upsert([record("b", [1, 0, 0])], namespace="ns")
    assert files(tmp_path) == saved


async def test_a_second_index_on_the_directory_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    with pytest.raises(DataDirectoryInUseError, match=str(tmp_path)):
        EmbeddedVectorIndex(tmp_path)
    await index.close()
    assert (await EmbeddedVectorIndex(tmp_path).stats()).total_vector_count == 1


def test_an_index_in_another_process_refuses_this_one(tmp_path: Path) -> None:
    holder = [sys.executable, "-c", HOLD_INDEX, str(tmp_path)]
    with subprocess.Popen(holder, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        assert process.stdout.readline() == b"open\n"
        with pytest.raises(DataDirectoryInUseError) as refused:
            EmbeddedVectorIndex(tmp_path)
        process.kill()
    assert refused.value.pid == process.pid
    EmbeddedVectorIndex(tmp_path)


@pytest.mark.parametrize("path", ["disk", "memory"])
async def test_a_closed_index_refuses_every_call(tmp_path: Path, path: str) -> None:
    index = EmbeddedVectorIndex(tmp_path if path == "disk" else None)
    await index.upsert([record("a", [1, 0])], namespace="ns")
    await index.close()
    await index.close()
    calls = [
        lambda: index.upsert([record("b", [0, 1])], namespace="ns"),
        lambda: index.query([1, 0], top_k=1, namespace="ns"),
        lambda: index.delete(namespace="ns", delete_all=True),
        index.stats,
        lambda: anext(index.list_ids("ns")),
    ]
    for call in calls:
        with pytest.raises(BackendError, match="closed"):
            await call()


async def test_close_waits_for_a_write_in_progress(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    write = asyncio.create_task(index.upsert([record("a", [1, 0])], namespace="ns"))
    await asyncio.sleep(0)
    await index.close()
    assert write.done()
    assert write.result() == 1
    assert (await EmbeddedVectorIndex(tmp_path).stats()).total_vector_count == 1


async def test_an_unreadable_directory_is_released(tmp_path: Path) -> None:
    (tmp_path / "index.json").write_text("not json")
    with pytest.raises(ValueError, match="Expecting value"):
        EmbeddedVectorIndex(tmp_path)
    (tmp_path / "index.json").unlink()
    assert (await EmbeddedVectorIndex(tmp_path).stats()).namespaces == {}

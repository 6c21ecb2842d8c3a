"""The embedded keyword index survives a restart, never leaves half a write on disk, and is
the only writer of its directory until it is closed."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest

from retrieval.adapters.embedded_index import bm25_keyword_index
from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.domain.keywords import KeywordRecord
from retrieval.errors import BackendError, DataDirectoryInUseError, InvalidRequestError


def record(record_id: str, text: str, **metadata) -> KeywordRecord:
    return KeywordRecord(id=record_id, text=text, metadata=metadata)


CORPUS = [
    record("a", "Blister blight on young tea leaves", domain="x", tags=["t"], n=2, ok=True),
    record("b", "Frost damages tea bushes", domain="y"),
    record("c", "Copper fungicide against blister blight", domain="x", n=3.5),
]


async def snapshot_of(index: Bm25KeywordIndex, namespace: str = "ns") -> tuple:
    found = await index.query("blister tea frost", top_k=5, namespace=namespace)
    filtered = await index.query("blight", top_k=5, namespace=namespace, filter={"n": {"$gt": 2}})
    listed = [page async for page in index.list_ids(namespace)]
    return found, filtered, listed, await index.count(namespace)


async def test_a_reopened_index_answers_the_same(tmp_path: Path) -> None:
    index = Bm25KeywordIndex(tmp_path)
    await index.upsert(CORPUS, namespace="ns")
    await index.upsert([record("z", "tea")], namespace="other.v2")
    before = await snapshot_of(index)
    await index.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".lock", "ns.json", "other.v2.json"]

    reopened = Bm25KeywordIndex(tmp_path)
    assert await snapshot_of(reopened) == before
    assert before[0]
    assert before[1]
    assert [m.id for m in await reopened.query("tea", top_k=5, namespace="other.v2")] == ["z"]


async def test_terms_are_stored_analysed(tmp_path: Path) -> None:
    index = Bm25KeywordIndex(tmp_path)
    await index.upsert([record("a", "The pruned bushes")], namespace="ns")
    saved = json.loads((tmp_path / "ns.json").read_text())
    assert saved["ids"] == ["a"]
    assert saved["terms"] == ["prune bush"]
    assert saved["metadata"] == [{}]


async def test_deleting_every_record_removes_the_file(tmp_path: Path) -> None:
    index = Bm25KeywordIndex(tmp_path)
    await index.upsert(CORPUS, namespace="ns")
    await index.delete(namespace="ns", ids=["a", "b", "c"])
    await index.close()
    assert not (tmp_path / "ns.json").exists()
    assert await Bm25KeywordIndex(tmp_path).count("ns") == 0


async def test_a_write_interrupted_before_the_rename_leaves_the_old_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Bm25KeywordIndex(tmp_path)
    await index.upsert(CORPUS, namespace="ns")
    before = await snapshot_of(index)
    saved = (tmp_path / "ns.json").read_bytes()

    def crash(source: str, target: Path) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        await index.upsert([record("b", "volcano ash")], namespace="ns")
    with pytest.raises(OSError, match="disk gone"):
        await index.delete(namespace="ns", ids=["a"])
    monkeypatch.undo()

    assert (tmp_path / "ns.json").read_bytes() == saved
    assert await snapshot_of(index) == before
    await index.close()
    assert list(tmp_path.glob("*.tmp"))
    reopened = Bm25KeywordIndex(tmp_path)
    assert await snapshot_of(reopened) == before
    assert not list(tmp_path.glob("*.tmp"))


async def test_a_cancelled_write_still_lands_before_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = Bm25KeywordIndex(tmp_path)
    entered, go_on = threading.Event(), threading.Event()
    write = bm25_keyword_index.write_atomically

    def held_write(target: Path, payload: bytes) -> None:
        entered.set()
        go_on.wait(timeout=10)
        write(target, payload)

    monkeypatch.setattr(bm25_keyword_index, "write_atomically", held_write)
    first = asyncio.create_task(index.upsert([record("a", "tea")], namespace="ns"))
    await asyncio.to_thread(entered.wait, 10)
    first.cancel()
    second = asyncio.create_task(index.upsert([record("b", "tea")], namespace="ns"))
    await asyncio.sleep(0.05)
    go_on.set()
    await second
    assert first.cancelled()
    assert [page async for page in index.list_ids("ns")] == [["a", "b"]]
    await index.close()
    assert [page async for page in Bm25KeywordIndex(tmp_path).list_ids("ns")] == [["a", "b"]]


async def test_a_second_index_on_the_directory_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    index = Bm25KeywordIndex(tmp_path)
    await index.upsert(CORPUS, namespace="ns")
    with pytest.raises(DataDirectoryInUseError, match=str(tmp_path)):
        Bm25KeywordIndex(tmp_path)
    await index.close()
    assert await Bm25KeywordIndex(tmp_path).count("ns") == len(CORPUS)


async def test_close_waits_for_a_write_in_progress(tmp_path: Path) -> None:
    index = Bm25KeywordIndex(tmp_path)
    write = asyncio.create_task(index.upsert(CORPUS, namespace="ns"))
    await asyncio.sleep(0)
    await index.close()
    assert write.result() == len(CORPUS)
    assert await Bm25KeywordIndex(tmp_path).count("ns") == len(CORPUS)


@pytest.mark.parametrize("path", ["disk", "memory"])
async def test_a_closed_index_refuses_every_call(tmp_path: Path, path: str) -> None:
    index = Bm25KeywordIndex(tmp_path if path == "disk" else None)
    await index.upsert(CORPUS, namespace="ns")
    await index.close()
    await index.close()
    calls = [
        lambda: index.upsert([record("d", "tea")], namespace="ns"),
        lambda: index.query("tea", top_k=1, namespace="ns"),
        lambda: index.delete(namespace="ns", delete_all=True),
        lambda: index.count("ns"),
        lambda: anext(index.list_ids("ns")),
    ]
    for call in calls:
        with pytest.raises(BackendError, match="closed"):
            await call()


@pytest.mark.parametrize("namespace", ["../escape", "", ".hidden", "a/b"])
async def test_a_namespace_that_is_no_slug_is_refused(tmp_path: Path, namespace: str) -> None:
    index = Bm25KeywordIndex(tmp_path / "index")
    with pytest.raises(InvalidRequestError, match="namespace"):
        await index.upsert([record("a", "tea")], namespace=namespace)
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".lock", "index"]


async def test_terms_of_another_analysis_are_refused_and_the_directory_released(
    tmp_path: Path,
) -> None:
    stored = {"analysis": "whitespace", "ids": ["a"], "terms": ["Tea"], "metadata": [{}]}
    (tmp_path / "ns.json").write_text(json.dumps(stored))
    with pytest.raises(ValueError, match="another analysis"):
        Bm25KeywordIndex(tmp_path)
    (tmp_path / "ns.json").unlink()
    assert await Bm25KeywordIndex(tmp_path).count("ns") == 0

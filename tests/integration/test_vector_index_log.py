"""The embedded vector index writes what a batch holds, and a crash at any point leaves every
write whole: applied or not, never half."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendError
from retrieval_bench.vector_index import bytes_written

DIMENSION = 64


def records(prefix: str, count: int, seed: int = 0, **metadata: object) -> list[VectorRecord]:
    values = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    return [
        VectorRecord.model_construct(id=f"{prefix}{n}", values=tuple(row), metadata=dict(metadata))
        for n, row in enumerate(values.tolist())
    ]


async def contents(path: Path) -> dict[str, tuple[tuple[float, ...], dict]]:
    """Every record of the index at ``path`` (opened and closed again), by namespace and id."""
    index = EmbeddedVectorIndex(path)
    try:
        found = {}
        for namespace in (await index.stats()).namespaces:
            ids = [i async for page in index.list_ids(namespace) for i in page]
            for record_id, stored in (await index.fetch(ids, namespace)).items():
                values = tuple(round(v, 5) for v in stored.values)
                found[f"{namespace}/{record_id}"] = (values, stored.metadata)
        return found
    finally:
        await index.close()


def copy_of(directory: Path, target: Path) -> Path:
    shutil.copytree(directory, target, ignore=shutil.ignore_patterns(".lock"))
    return target


async def test_an_upsert_writes_what_its_batch_holds_not_the_namespace(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert(records("seed-", 10_000), namespace="ns")
    batch = records("new-", 10, seed=1, domain="plant_diseases")
    one_record = DIMENSION * 4 + 100

    before = bytes_written()
    await index.upsert(batch, namespace="ns")
    upserted = bytes_written() - before
    before = bytes_written()
    await index.delete(namespace="ns", ids=[r.id for r in batch[:5]])
    deleted = bytes_written() - before

    assert upserted < 10 * one_record
    assert deleted < 5 * one_record
    assert (await index.stats()).namespaces["ns"].vector_count == 10_005
    await index.close()


async def written_twice(path: Path) -> tuple[dict, Path, int]:
    """An index written once, then once more: the state after the first write, the log, and
    where the second write's record starts in it (it runs to the end)."""
    index = EmbeddedVectorIndex(path)
    await index.upsert(records("a", 3, domain="x"), namespace="ns")
    await index.close()
    first = await contents(path)
    (log,) = path.glob("ns.*.log")
    start = log.stat().st_size
    index = EmbeddedVectorIndex(path)
    await index.upsert([*records("b", 2, seed=1), *records("a", 1, seed=2)], namespace="ns")
    await index.close()
    assert len(await contents(path)) == 5
    return first, log, start


async def test_a_torn_last_record_is_ignored_at_every_length(tmp_path: Path) -> None:
    first, log, start = await written_twice(tmp_path / "index")
    whole = log.read_bytes()
    cuts = sorted({*range(start, start + 16), *range(start, len(whole), 61), len(whole) - 1})
    for cut in cuts:
        torn = copy_of(tmp_path / "index", tmp_path / f"cut-{cut}")
        (torn / log.name).write_bytes(whole[:cut])
        assert await contents(torn) == first, f"cut at byte {cut}"


@pytest.mark.parametrize("where", [0, 5, 12, 40, -1], ids=lambda n: f"byte-{n}")
async def test_a_corrupt_last_record_is_ignored_and_writes_go_on_after_it(
    tmp_path: Path, where: int
) -> None:
    first, log, start = await written_twice(tmp_path / "index")
    whole = bytearray(log.read_bytes())
    whole[start + where if where >= 0 else where] ^= 0x20
    log.write_bytes(bytes(whole))
    assert await contents(tmp_path / "index") == first

    index = EmbeddedVectorIndex(tmp_path / "index")
    await index.upsert(records("c", 1, seed=3), namespace="ns")
    await index.close()
    assert set(await contents(tmp_path / "index")) == {*first, "ns/c0"}


async def test_a_failed_append_changes_nothing_and_refuses_later_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert(records("a", 2), namespace="ns")

    def full_disk(descriptor: int) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(os, "fsync", full_disk)
        with pytest.raises(BackendError, match="could not append"):
            await index.upsert(records("b", 1), namespace="ns")
    assert await index.fetch(["b0"], "ns") == {}
    with pytest.raises(BackendError, match="failed earlier"):
        await index.upsert(records("c", 1), namespace="ns")
    await index.close()
    assert {"ns/a0", "ns/a1"} <= set(await contents(tmp_path))


class DiskStates:
    """Copies the directory before every rename and removal: what a crash (kill -9) between
    two such calls leaves behind."""

    def __init__(self, directory: Path, into: Path) -> None:
        self.directory = directory
        self.into = into
        self.copies: list[Path] = []

    def before(self, call: Callable[..., None]) -> Callable[..., None]:
        def recorded(*args: object, **kwargs: object) -> None:
            if any(str(arg).startswith(str(self.directory)) for arg in args):
                target = self.into / f"state-{len(self.copies)}"
                self.copies.append(copy_of(self.directory, target))
            call(*args, **kwargs)

        return recorded


@pytest.mark.parametrize("graph", [False, True], ids=["exact", "graph"])
async def test_a_compaction_interrupted_at_any_step_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, graph: bool
) -> None:
    directory = tmp_path / "index"
    options = {"compact_min_changes": 12, "ann_min_vectors": 20 if graph else 1_000}
    index = EmbeddedVectorIndex(directory, **options)
    await index.upsert(records("a", 30, domain="x"), namespace="ns")
    await index.upsert(records("keep", 5), namespace="other")
    await index.settle()
    await index.delete(namespace="ns", ids=["a1", "a2"])
    await index.upsert(records("a", 3, seed=1, domain="y"), namespace="ns")
    states = DiskStates(directory, tmp_path)
    monkeypatch.setattr(os, "replace", states.before(os.replace))
    monkeypatch.setattr(os, "unlink", states.before(os.unlink))
    await index.upsert(records("b", 12, seed=2), namespace="ns")
    await index.settle()
    monkeypatch.undo()
    await index.close()
    expected = await contents(directory)

    assert set(expected) == {f"ns/a{n}" for n in range(30) if n not in (1, 2)} | {
        "ns/a1",
        "ns/a2",
        *(f"ns/b{n}" for n in range(12)),
        *(f"other/keep{n}" for n in range(5)),
    }
    assert expected["ns/a0"][1] == {"domain": "y"}
    assert len(states.copies) >= 3
    for state in states.copies:
        assert await contents(state) == expected, state.name
    assert list(directory.glob("*.hnsw")) == ([directory / "ns.hnsw"] if graph else [])


WRITER = """
import asyncio, sys
from pathlib import Path
import numpy as np
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval_bench.vector_index import bytes_written
from retrieval.domain.vectors import VectorRecord

async def main():
    index = EmbeddedVectorIndex(Path(sys.argv[1]), compact_min_changes=60, ann_min_vectors=100)
    rng = np.random.default_rng(0)
    for batch in range(10_000):
        written = [
            VectorRecord.model_construct(id=record_id, values=tuple(row), metadata={"batch": batch})
            for record_id, row in zip(batch_ids(batch), rng.normal(size=(20, 16)).tolist())
        ]
        await index.upsert(written, namespace="ns")
        if batch % 3 == 2:
            await index.delete(namespace="ns", filter={"batch": batch - 1})
        print(batch, flush=True)
"""


def batch_ids(batch: int) -> list[str]:
    """Batches overwrite each other: 15 of them cover the 300 ids."""
    return [f"r{(batch * 20 + n) % 300}" for n in range(20)]


def states_after_each_write(batches: int) -> list[dict[str, int]]:
    """The batch of every record after each upsert and delete of the writer, in order."""
    state: dict[str, int] = {}
    states = [dict(state)]
    for batch in range(batches):
        state.update(dict.fromkeys(batch_ids(batch), batch))
        states.append(dict(state))
        if batch % 3 == 2:
            state = {i: b for i, b in state.items() if b != batch - 1}
            states.append(dict(state))
    return states


async def recovered_batches(path: Path) -> dict[str, int]:
    index = EmbeddedVectorIndex(path)
    stored = await index.fetch([f"r{n}" for n in range(300)], "ns")
    await index.close()
    return {record_id: record.metadata["batch"] for record_id, record in stored.items()}


@pytest.mark.parametrize("kill_after", [45, 80])
def test_a_writer_killed_mid_run_keeps_every_acknowledged_write_whole(
    tmp_path: Path, kill_after: int
) -> None:
    source = WRITER + inspect.getsource(batch_ids) + "\nasyncio.run(main())\n"
    command = [sys.executable, "-c", source, str(tmp_path)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as writer:
        assert writer.stdout is not None
        output = []
        for line in writer.stdout:
            output.append(line)
            if line.strip() == str(kill_after):
                break
        else:
            pytest.fail(f"the writer ended before batch {kill_after}:\n{''.join(output[-30:])}")
        writer.kill()

    recovered = asyncio.run(recovered_batches(tmp_path))
    states = states_after_each_write(kill_after + 50)
    acknowledged = len(states_after_each_write(kill_after + 1)) - 1
    assert recovered in states[acknowledged:]

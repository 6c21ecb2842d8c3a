"""Backup and restore of a namespace through the services the container wires over the test
kit's in-memory stores: a round trip gives the same documents, the same results and audit-clean
stores; another namespace, another model, a corrupt file, a restore cut short."""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from retrieval.adapters.extraction.entity_names_knowledge import (
    RULES_VERSION,
    EntityNamesKnowledgeExtractor,
)
from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.container import Container
from retrieval.domain.backup import FORMAT_VERSION
from retrieval.domain.graph import Extraction, GraphRecord, record_version
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackupFileError, NamespaceNotEmptyError, NotFoundError
from retrieval.lifecycle import Application, resolve, running
from retrieval.service.backup.backups import CHUNKS_PER_GROUP
from retrieval.service.ingestion.consistency import audit
from retrieval.settings import Settings
from retrieval_testkit import HashEmbedder, InMemoryVectorIndex
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.estate_notes import QUESTIONS, estate_notes

NS = "garden"
VERSION = f'"version":{FORMAT_VERSION}'.encode()
opened: list[str] = []
"""Every file this process opens, while a test is watching (``opens``)."""
watching = False


def note_open(event: str, args: tuple[object, ...]) -> None:
    if watching and event == "open":
        opened.append(str(args[0]))


sys.addaudithook(note_open)


@pytest.fixture
def opens() -> Iterator[list[str]]:
    """The paths of the files opened during the test."""
    global watching
    opened.clear()
    watching = True
    try:
        yield opened
    finally:
        watching = False


class CrashingIndex(InMemoryVectorIndex):
    """An in-memory index whose process dies (an error no service handles) at the upsert
    numbered ``crash_at``."""

    def __init__(self) -> None:
        super().__init__()
        self.crash_at: int | None = None
        self.upserts = 0

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        self.upserts += 1
        if self.upserts == self.crash_at:
            raise CrashError
        return await super().upsert(records, namespace)


class CrashError(Exception):
    """The process stopping."""


class CountingKnowledgeExtractor(EntityNamesKnowledgeExtractor):
    """The rule-based extractor, counting the texts it reads."""

    def __init__(self, version: str = RULES_VERSION) -> None:
        super().__init__(RuleBasedEntityExtractor(), version)
        self.read = 0

    async def extract(self, text: str) -> Extraction:
        self.read += 1
        return await super().extract(text)


@dataclass
class Stack:
    app: Application
    container: Container

    async def audit_clean(self, namespace: str) -> bool:
        stores = await resolve(self.container.chunk_stores)
        ledger = await resolve(self.container.document_ledger)
        return (await audit(stores, ledger, namespace)).is_consistent

    async def chunk_ids(self, namespace: str) -> dict[str, tuple[str, ...]]:
        return {
            summary.document_id: tuple(
                c.chunk_id
                for c in (await self.app.library.document(summary.document_id, namespace)).chunks
            )
            for summary in await self.app.library.documents(namespace)
        }

    async def graph(self, namespace: str) -> dict[str, GraphRecord]:
        stores = await resolve(self.container.chunk_stores)
        ids = [c for chunks in (await self.chunk_ids(namespace)).values() for c in chunks]
        return await stores.graph.store.get_many(ids, namespace)

    async def answers(self, namespace: str) -> list[list[tuple[str, float]]]:
        results = [
            await self.app.retrieval.retrieve(question, namespace=namespace, top_k=5)
            for question in QUESTIONS
        ]
        return [[(m.chunk_id, round(m.score, 6)) for m in r.matches] for r in results]


Started = Callable[..., AbstractAsyncContextManager[Stack]]


@pytest.fixture
def started(tmp_path: Path) -> Started:
    @asynccontextmanager
    async def start(name: str = "a", **replacements: object) -> AsyncIterator[Stack]:
        settings = Settings(_env_file=None, data_dir=tmp_path / name)
        container = in_memory_container(settings, **replacements)
        async with running(settings, container) as app:
            yield Stack(app, container)

    return start


async def test_a_round_trip_gives_the_same_documents_results_and_clean_stores(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started() as stack:
        await stack.app.ingestion.ingest(estate_notes(12), NS)
        before, answered = await stack.chunk_ids(NS), await stack.answers(NS)

        report = await stack.app.backups.backup(NS, file)
        assert (report.documents, report.chunks) == (12, sum(map(len, before.values())))
        assert not report.without_vectors
        assert not report.left_out
        await stack.app.library.delete_namespace(NS)
        assert await stack.app.library.documents(NS) == []

        restored = await stack.app.backups.restore(file)
        assert (restored.restored, restored.unchanged, restored.failed) == (12, 0, {})
        assert not restored.embedded_again
        assert await stack.chunk_ids(NS) == before
        assert await stack.answers(NS) == answered
        assert await stack.audit_clean(NS)


async def test_a_restore_into_another_namespace_leaves_the_first_as_it_was(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started() as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        await stack.app.backups.backup(NS, file)
        await stack.app.backups.restore(file, "copy")
        assert await stack.chunk_ids("copy") == await stack.chunk_ids(NS)
        assert await stack.answers("copy") == await stack.answers(NS)
        assert await stack.audit_clean("copy")
        assert await stack.audit_clean(NS)
        sources = {d.document_id: d.source for d in await stack.app.library.documents("copy")}
        assert sources["doc-00001"] == "/kb/notes/1.md"
        assert sources["doc-00000"] is None


async def test_another_model_embeds_every_chunk_again(started: Started, tmp_path: Path) -> None:
    file = tmp_path / "garden.backup"
    async with started("a") as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        await stack.app.backups.backup(NS, file)
        before = await stack.chunk_ids(NS)
    other = HashEmbedder(dimension=32, model="hash-other")
    async with started("b", model_embedder=other) as stack:
        report = await stack.app.backups.restore(file)
        assert report.embedded_again
        assert report.restored == 4
        assert len(other.passages) == report.chunks
        after = await stack.chunk_ids(NS)
        assert after.keys() == before.keys()
        assert all(len(after[d]) == len(before[d]) for d in before)
        assert not set(after["doc-00000"]) & set(before["doc-00000"])  # ids name the model
        assert all(await stack.answers(NS))
        assert await stack.audit_clean(NS)


def rewritten(file: Path, change: Callable[[bytes], bytes]) -> None:
    with gzip.open(file, "rb") as read:
        data = read.read()
    with gzip.open(file, "wb") as write:
        write.write(change(data))


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda f: rewritten(f, lambda d: d.replace(b"Notes 1", b"Notes 9", 1)), "checksum"),
        (lambda f: rewritten(f, lambda d: d[: d.rindex(b'{"end"')]), "end is missing"),
        (lambda f: f.write_bytes(f.read_bytes()[:-40]), "truncated"),
        (lambda f: f.write_bytes(b"not a backup"), "not a gzip file"),
        (lambda f: rewritten(f, lambda d: d.replace(VERSION, b'"version":7', 1)), "7"),
    ],
)
async def test_a_damaged_file_is_refused_and_nothing_is_written(
    started: Started, tmp_path: Path, damage: Callable[[Path], None], says: str
) -> None:
    file = tmp_path / "garden.backup"
    async with started() as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        await stack.app.backups.backup(NS, file)
        damage(file)
        with pytest.raises(BackupFileError, match=says):
            await stack.app.backups.restore(file, "copy")
        assert await stack.app.library.documents("copy") == []


async def test_a_restore_cut_short_finishes_when_run_again_without_duplicates(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started("a") as stack:
        await stack.app.ingestion.ingest(estate_notes(CHUNKS_PER_GROUP // 3 + 10), NS)
        await stack.app.backups.backup(NS, file)
        before = await stack.chunk_ids(NS)
    index = CrashingIndex()
    async with started("b", vector_index=index) as stack:
        index.crash_at = 2
        with pytest.raises(CrashError):
            await stack.app.backups.restore(file)
        partly = await stack.chunk_ids(NS)
        assert 0 < len(partly) < len(before)
        assert await stack.audit_clean(NS)

        index.crash_at = None
        report = await stack.app.backups.restore(file)
        assert (report.unchanged, report.restored) == (len(partly), len(before) - len(partly))
        assert await stack.chunk_ids(NS) == before
        assert await stack.audit_clean(NS)
        stores = await resolve(stack.container.chunk_stores)
        assert await stores.texts.count(NS) == sum(map(len, before.values()))


async def test_a_restore_reads_its_file_once_to_check_it_and_once_to_write(
    started: Started, tmp_path: Path, opens: list[str]
) -> None:
    file = tmp_path / "garden.backup"
    async with started() as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        await stack.app.backups.backup(NS, file)
        opens.clear()
        report = await stack.app.backups.restore(file, "copy")
        assert (report.documents, report.restored) == (4, 4)
    assert opens.count(str(file)) == 2


async def test_a_namespace_holding_other_documents_is_refused_unless_replaced(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started() as stack:
        documents = estate_notes(4)
        await stack.app.ingestion.ingest(documents, NS)
        await stack.app.backups.backup(NS, file)
        before = await stack.chunk_ids(NS)
        changed = documents[0].model_copy(update={"content": "Shade trees over young tea."})
        await stack.app.ingestion.ingest([changed, *estate_notes(6)[4:]], NS)

        with pytest.raises(NamespaceNotEmptyError, match="doc-00000"):
            await stack.app.backups.restore(file)
        report = await stack.app.backups.restore(file, replace=True)
        assert (report.restored, report.unchanged, report.deleted) == (1, 3, 2)
        assert await stack.chunk_ids(NS) == before
        assert await stack.audit_clean(NS)


async def test_an_empty_namespace_is_not_backed_up(started: Started, tmp_path: Path) -> None:
    file = tmp_path / "empty.backup"
    async with started() as stack:
        with pytest.raises(NotFoundError, match="holds no documents"):
            await stack.app.backups.backup("empty", file)
    assert list(tmp_path.glob("empty.backup*")) == []


async def test_a_restore_writes_the_graph_records_the_file_carries_without_extracting(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started("a") as stack:
        await stack.app.ingestion.ingest(estate_notes(6), NS)
        await stack.app.backups.backup(NS, file)
        graph = await stack.graph(NS)
    extractor = CountingKnowledgeExtractor()
    async with started("b", knowledge_extractor=extractor) as stack:
        await stack.app.backups.restore(file)
        assert extractor.read == 0
        assert await stack.graph(NS) == graph
        assert await stack.audit_clean(NS)


async def test_another_extractor_reads_every_chunk_again(started: Started, tmp_path: Path) -> None:
    file = tmp_path / "garden.backup"
    async with started("a") as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        report = await stack.app.backups.backup(NS, file)
    extractor = CountingKnowledgeExtractor(version="rules:other")
    async with started("b", knowledge_extractor=extractor) as stack:
        await stack.app.backups.restore(file)
        assert extractor.read == report.chunks
        versions = {r.version for r in (await stack.graph(NS)).values()}
        assert versions == {record_version("rules:other")}
        assert await stack.audit_clean(NS)


def as_version_one(file: Path) -> None:
    """``file`` rewritten as the first version of the format wrote it: no graph, its
    checksum made again."""
    with gzip.open(file, "rb") as read:
        entries = [json.loads(line) for line in read]
    entries[0]["header"] |= {"version": 1}
    del entries[0]["header"]["graph_version"]
    for entry in entries[1:-1]:
        del entry["document"]["extractions"]
    lines = b"".join(json.dumps(entry).encode() + b"\n" for entry in entries[:-1])
    entries[-1]["end"]["sha256"] = hashlib.sha256(lines).hexdigest()
    with gzip.open(file, "wb") as write:
        write.write(lines + json.dumps(entries[-1]).encode() + b"\n")


async def test_a_file_of_the_first_version_is_restored_with_its_graph_extracted_again(
    started: Started, tmp_path: Path
) -> None:
    file = tmp_path / "garden.backup"
    async with started("a") as stack:
        await stack.app.ingestion.ingest(estate_notes(4), NS)
        report = await stack.app.backups.backup(NS, file)
        before, graph = await stack.chunk_ids(NS), await stack.graph(NS)
    as_version_one(file)
    extractor = CountingKnowledgeExtractor()
    async with started("b", knowledge_extractor=extractor) as stack:
        restored = await stack.app.backups.restore(file)
        assert (restored.restored, restored.embedded_again) == (4, False)
        assert extractor.read == report.chunks
        assert await stack.chunk_ids(NS) == before
        assert await stack.graph(NS) == graph
        assert await stack.audit_clean(NS)

"""Crash consistency of ingestion: every store call may fail or be the last one, and the next
run (or ``reconcile``) converges to the documents as last ingested."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Sequence

import pytest

from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease, fingerprint
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.errors import BackendUnavailableError
from retrieval.grpc.write_repair import WriteRepair
from retrieval.service.caching.caching_embedder import CachingEmbedder
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryEmbeddingCache,
    InMemoryGraphStore,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.stages import offline_graph

NS = "crash"


def body(version: str, sections: int = 3) -> str:
    return "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"{version}w{n}x{i}" for i in range(50))
        for n in range(sections)
    )


def doc(document_id: str, version: str = "v1", **extra) -> RagDocument:
    fields = {"title": "Pruning", "domain": "tea_cultivation", "content": body(version)} | extra
    return RagDocument(document_id=document_id, **fields)


class Crash(BaseException):
    """The process died: nothing after it runs, not even a rollback."""


class Stores:
    """The four stores of one namespace; ``faulty`` fails the Nth store call."""

    def __init__(self, index: InMemoryVectorIndex | None = None) -> None:
        self.index = index or InMemoryVectorIndex()
        self.keywords = InMemoryKeywordIndex()
        self.chunks = InMemoryChunkRepository()
        self.graph = InMemoryGraphStore()
        self.now = 0.0
        self.ledger = InMemoryDocumentLedger(lease_s=60.0, clock=lambda: self.now)

    async def audit(self) -> NamespaceAudit:
        graph = offline_graph(self.graph)
        return await audit(
            ChunkStores(self.index, self.keywords, self.chunks, graph), self.ledger, NS
        )

    def restart(self) -> None:
        """A new process: the leases of the one that died have expired."""
        self.now += 3600.0

    def service(
        self,
        embedder=None,
        *,
        fail_at: int | None = None,
        crash: bool = False,
        lease_wait_s: float = 0.0,
    ) -> tuple[IngestionService, Counter]:
        calls = Counter()
        wrap = (lambda store: Faulty(store, calls, fail_at, crash)) if fail_at else (lambda s: s)
        service = IngestionService(
            embedder or HashEmbedder(),
            ChunkStores(
                wrap(self.index),
                wrap(self.keywords),
                wrap(self.chunks),
                offline_graph(wrap(self.graph)),
            ),
            wrap(self.ledger),
            InMemoryNamespaceGenerations(),
            DEFAULT_DOMAINS,
            NS,
            ChunkingPolicy(max_words=60, overlap_words=10),
            documents_per_write=2,
            lease_wait_s=lease_wait_s,
        )
        return service, calls

    def repair(self, embedder=None) -> Repair:
        graph = offline_graph(self.graph)
        stores = ChunkStores(self.index, self.keywords, self.chunks, graph)
        reconciliation = Reconciliation(embedder or HashEmbedder(), stores, self.ledger, 0.0)
        return Repair(reconciliation, InMemoryNamespaceGenerations())

    async def check(self, documents: Sequence[RagDocument]) -> None:
        """Every store holds exactly the chunks of these documents, each committed."""
        expected = {
            chunk.chunk_id
            for document in documents
            for chunk in self.service()[0].split(document, NS)
        }
        found = await self.audit()
        assert found.vectors == expected
        assert found.keywords == expected
        assert found.graph == expected
        assert set(found.texts) == expected
        assert found.is_consistent
        for document in documents:
            record = found.records[document.document_id]
            assert record.state is DocumentState.COMMITTED
            assert set(record.chunk_ids) == {
                chunk.chunk_id for chunk in self.service()[0].split(document, NS)
            }


class Counter:
    def __init__(self) -> None:
        self.count = 0
        self.dead = False


class Faulty:
    """Passes calls through, but the ``fail_at``-th store call (counted across stores) fails:
    with a backend error, or as a crash after which every call fails."""

    def __init__(self, inner, calls: Counter, fail_at: int | None, crash: bool) -> None:
        self._inner = inner
        self._calls = calls
        self._fail_at = fail_at
        self._crash = crash

    def __getattr__(self, name: str):
        attribute = getattr(self._inner, name)
        if not inspect.iscoroutinefunction(attribute):
            return attribute

        async def call(*args, **kwargs):
            self._calls.count += 1
            if self._calls.dead:
                raise Crash
            if self._calls.count == self._fail_at:
                if self._crash:
                    self._calls.dead = True
                    raise Crash
                raise BackendUnavailableError(f"store call {self._fail_at} failed")
            return await attribute(*args, **kwargs)

        return call


async def run(stores: Stores, fail_at: int, crash: bool, documents: Sequence[RagDocument]):
    """Ingest with the ``fail_at``-th store call failing; after a crash, restart."""
    try:
        await stores.service(fail_at=fail_at, crash=crash)[0].ingest(documents, NS)
    except BackendUnavailableError:
        pass
    except Crash:
        stores.restart()


async def test_a_crash_between_texts_and_vectors_is_repaired_by_the_next_run() -> None:
    documents = [doc("a"), doc("b")]
    total = await count_calls([], documents)
    crashed = [n for n in range(1, total + 1) if await left_texts_without_vectors(n, documents)]
    assert crashed, "some crash point leaves texts whose vectors were never written"


async def left_texts_without_vectors(fail_at: int, documents: Sequence[RagDocument]) -> bool:
    """Whether crashing at store call ``fail_at`` leaves texts without vectors; if so, checks
    that re-running the same ingestion stores every vector (it used to say UNCHANGED)."""
    stores = Stores()
    await run(stores, fail_at, True, documents)
    found = await stores.audit()
    if not found.texts_without_vectors:
        return False
    outcomes = await stores.service()[0].ingest(documents, NS)
    assert all(outcome.outcome is not Outcome.UNCHANGED for outcome in outcomes)
    await stores.check(documents)
    return True


async def count_calls(documents_before, documents_after) -> int:
    stores = Stores()
    await stores.service()[0].ingest(documents_before, NS)
    service, calls = stores.service(fail_at=10**6)
    await service.ingest(documents_after, NS)
    return calls.count


BEFORE = [doc("a"), doc("b", "v1"), doc("c")]
AFTER = [doc("a"), doc("b", "v2"), doc("c", metadata={"region": "assam"}), doc("d")]


@pytest.mark.parametrize("crash", [False, True], ids=["error", "crash"])
async def test_every_store_call_can_fail_and_the_next_run_converges(crash: bool) -> None:
    total = await count_calls(BEFORE, AFTER)
    assert total > 10
    for fail_at in range(1, total + 1):
        stores = Stores()
        await stores.service()[0].ingest(BEFORE, NS)
        await run(stores, fail_at, crash, AFTER)
        await stores.service()[0].ingest(AFTER, NS)
        await stores.check(AFTER)


@pytest.mark.parametrize("crash", [False, True], ids=["error", "crash"])
async def test_every_store_call_can_fail_and_reconcile_leaves_one_whole_version(
    crash: bool,
) -> None:
    total = await count_calls(BEFORE, AFTER)
    versions = {
        document.document_id: [
            {chunk.chunk_id for chunk in Stores().service()[0].split(d, NS)}
            for d in (*BEFORE, *AFTER)
            if d.document_id == document.document_id
        ]
        for document in AFTER
    }
    for fail_at in range(1, total + 1):
        stores = Stores()
        await stores.service()[0].ingest(BEFORE, NS)
        await run(stores, fail_at, crash, AFTER)
        report = await stores.repair().reconcile(NS)
        found = await stores.audit()
        assert found.is_consistent, (fail_at, report)
        assert found.vectors == set(found.texts)
        for document_id, choices in versions.items():
            stored = {chunk for chunk in found.texts if chunk.startswith(f"{document_id}#")}
            assert stored in [*choices, set()] if document_id == "d" else stored in choices


async def test_a_metadata_change_is_an_update_that_replaces_the_filterable_values() -> None:
    stores = Stores()
    service = stores.service()[0]
    await service.ingest([doc("a", metadata={"region": "assam"})], NS)
    moved = doc("a", domain="regional_context", metadata={"region": "darjeeling"})
    (outcome,) = await service.ingest([moved], NS)
    assert outcome.outcome is Outcome.UPDATED
    await stores.check([moved])
    hits = await stores.index.query([1.0] * 64, top_k=100, namespace=NS, filter={"region": "assam"})
    assert hits == []
    found = await stores.index.query(
        [1.0] * 64, top_k=100, namespace=NS, filter={"domain": "regional_context"}
    )
    assert len(found) == outcome.chunks


class StaleTextsStay(InMemoryChunkRepository):
    """A chunk store whose deletes fail."""

    async def delete_chunks(self, chunk_ids: Sequence[str], namespace: str) -> int:
        raise BackendUnavailableError("chunk store down for deletes")


async def test_a_failed_cleanup_never_empties_the_document() -> None:
    stores = Stores()
    stores.chunks = StaleTextsStay()
    await stores.service()[0].ingest([doc("a")], NS)
    (outcome,) = await stores.service()[0].ingest([doc("a", "v2")], NS)
    assert outcome.outcome is Outcome.UPDATED
    new = {chunk.chunk_id for chunk in stores.service()[0].split(doc("a", "v2"), NS)}
    found = await stores.audit()
    assert new <= found.vectors & set(found.texts), "the new version is searchable"
    healthy = InMemoryChunkRepository()
    await healthy.upsert_many(list((await stores.chunks.get_many(list(found.texts), NS)).values()))
    stores.chunks = healthy
    (again,) = await stores.service()[0].ingest([doc("a", "v2")], NS)
    assert again.outcome is Outcome.UNCHANGED
    await stores.check([doc("a", "v2")])


class SlowEmbedder(HashEmbedder):
    """Embeds after a pause, so a call can be cancelled or overtaken mid-write."""

    def __init__(self, pause_s: float) -> None:
        super().__init__()
        self.pause_s = pause_s

    async def embed_passages(self, texts: Sequence[str]):
        await asyncio.sleep(self.pause_s)
        return await super().embed_passages(texts)


class SlowIndex(InMemoryVectorIndex):
    async def upsert(self, records, namespace: str) -> int:
        await asyncio.sleep(0.05)
        return await super().upsert(records, namespace)


async def test_a_cancelled_ingest_leaves_a_state_the_next_run_completes() -> None:
    for delay in (0.0, 0.01, 0.03, 0.06, 0.2):
        stores = Stores(index=SlowIndex())
        await stores.service()[0].ingest([doc("a")], NS)
        slow = stores.service(SlowEmbedder(0.02))[0]
        task = asyncio.create_task(slow.ingest([doc("a", "v2")], NS))
        await asyncio.sleep(delay)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        found = await stores.audit()
        assert found.texts_without_vectors == set(), delay
        assert found.pending == set(), delay
        await stores.service()[0].ingest([doc("a", "v2")], NS)
        await stores.check([doc("a", "v2")])


async def test_concurrent_updates_of_one_document_leave_one_version() -> None:
    """The slower writer started first: without one writer at a time it would commit last,
    over the faster one's chunks, and leave those unaccounted for."""
    stores = Stores()
    await stores.service()[0].ingest([doc("a")], NS)
    slow = stores.service(SlowEmbedder(0.2), lease_wait_s=5.0)[0]
    fast = stores.service(SlowEmbedder(0.01), lease_wait_s=5.0)[0]
    first = asyncio.create_task(slow.ingest([doc("a", "v2")], NS))
    await asyncio.sleep(0.05)
    second = asyncio.create_task(fast.ingest([doc("a", "v3")], NS))
    outcomes = [*await first, *await second]
    assert [outcome.outcome for outcome in outcomes] == [Outcome.UPDATED, Outcome.UPDATED]
    found = await stores.audit()
    assert found.records["a"].fingerprint == fingerprint_of(doc("a", "v3"))
    await stores.check([doc("a", "v3")])


def fingerprint_of(document: RagDocument) -> str:
    return fingerprint(chunk.chunk_id for chunk in Stores().service()[0].split(document, NS))


async def test_a_renamed_or_relabelled_document_costs_no_model_time() -> None:
    stores = Stores()
    model = HashEmbedder()
    cached = CachingEmbedder(model, InMemoryEmbeddingCache(), max_entries=10_000)
    await stores.service(cached)[0].ingest([doc("a")], NS)
    embedded = len(model.passages)
    renamed = doc("a-renamed")
    relabelled = doc("a", metadata={"region": "assam"})
    outcomes = await stores.service(cached)[0].ingest([renamed, relabelled], NS)
    assert [o.outcome for o in outcomes] == [Outcome.CREATED, Outcome.UPDATED]
    assert len(model.passages) == embedded
    await stores.check([renamed, relabelled])


async def test_reconcile_rebuilds_a_lost_keyword_index_from_the_stored_texts() -> None:
    stores = Stores()
    model = HashEmbedder()
    await stores.service(model)[0].ingest([doc("a"), doc("b")], NS)
    embedded = len(model.passages)
    stores.keywords = InMemoryKeywordIndex()
    lost = await stores.audit()
    assert lost.texts_without_keywords == set(lost.texts)
    assert not lost.is_consistent

    report = await stores.repair(model).reconcile(NS)

    assert report.texts_without_keywords == len(lost.texts)
    assert report.incomplete_documents == ()
    await stores.check([doc("a"), doc("b")])
    assert len(model.passages) == embedded, "keyword entries need no model time"
    found = await stores.keywords.query("Pruning", top_k=10, namespace=NS)
    assert {match.id for match in found} == set(lost.texts)


async def test_reconcile_removes_keyword_entries_whose_text_is_gone() -> None:
    stores = Stores()
    await stores.service()[0].ingest([doc("a")], NS)
    orphan = KeywordRecord(id="a#9999-0000000000000000", text="Pruning orphan")
    await stores.keywords.upsert([orphan], NS)
    assert (await stores.audit()).keywords_without_texts == {orphan.id}
    await stores.repair().reconcile(NS)
    await stores.check([doc("a")])


async def left_pending(
    host: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[Stores, list[DocumentRecord]]:
    """The stores after the first crash point of a writer on ``host`` (``RETRIEVAL_HOST_ID``,
    left set) that leaves documents pending, and their records."""
    documents = [doc("a"), doc("b")]
    total = await count_calls([], documents)
    monkeypatch.setenv("RETRIEVAL_HOST_ID", host)
    for fail_at in range(1, total + 1):
        stores = Stores()
        with contextlib.suppress(Crash):
            await stores.service(fail_at=fail_at, crash=True)[0].ingest(documents, NS)
        records = (await stores.audit()).records.values()
        left = [r for r in records if r.state is not DocumentState.COMMITTED]
        if left:
            return stores, left
    pytest.fail("no crash point left a document pending")


async def test_a_replica_that_never_returns_has_its_writes_repaired_by_a_survivor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stores, left = await left_pending("replica-on-another-machine", monkeypatch)
    monkeypatch.delenv("RETRIEVAL_HOST_ID")
    survivor = WriteRepair(stores.repair(), NS)

    await survivor.repair()
    held = (await stores.audit()).records
    assert [held[r.document_id].state for r in left] == [r.state for r in left]

    stores.now += 61.0
    await survivor.repair()
    found = await stores.audit()
    assert found.is_consistent
    assert all(record.state is DocumentState.COMMITTED for record in found.records.values())


async def test_a_restarted_replica_recovers_its_writes_at_once_though_another_waits_for_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stores, records = await left_pending("replica-1", monkeypatch)
    left = [record.document_id for record in records]
    waiter = Lease(owner="writer-of-replica-0", host="replica-0", pid=1)
    assert (await stores.ledger.claim(NS, left, waiter)).records == {}

    assert await stores.repair().recover() == len(left)
    assert set((await stores.ledger.claim(NS, left, waiter)).records) == set(left)

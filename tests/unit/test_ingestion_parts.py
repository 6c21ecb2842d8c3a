"""The writer's group writes, the library and repair, each on its own over the test kit's
in-memory stores: what each leaves stored and reports."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from retrieval.domain.ledger import DocumentState, Provenance, fingerprint
from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import BackendUnavailableError, DocumentBusyError, NotFoundError
from retrieval.service.ingestion.chunking import ChunkingPolicy, Prepared
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit
from retrieval.service.ingestion.group_write import GroupCall, GroupWriter
from retrieval.service.ingestion.leases import writer_lease
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import DocumentOutcome, Outcome
from retrieval.service.ingestion.progress import EmbeddedTally, unheard
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval.service.timing import StageClock
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "parts"
POLICY = ChunkingPolicy(max_words=60, overlap_words=10)


class SwitchableIndex(InMemoryVectorIndex):
    """An index whose writes fail while ``down``."""

    down = False

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        if self.down:
            raise BackendUnavailableError("index down")
        return await super().upsert(records, namespace)


class LookupOverlapTexts(InMemoryChunkRepository):
    """Chunk texts whose lookup of a document's chunks waits on the store, noting how many
    of those lookups were under way at once."""

    def __init__(self) -> None:
        super().__init__()
        self.under_way = 0
        self.most_at_once = 0

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        self.under_way += 1
        self.most_at_once = max(self.most_at_once, self.under_way)
        await asyncio.sleep(0)
        self.under_way -= 1
        return await super().chunk_ids(document_id, namespace)


class Kit:
    """One namespace's in-memory stores, ledger and generations, and the parts over them."""

    def __init__(self) -> None:
        self.embedder = HashEmbedder()
        self.index = SwitchableIndex()
        self.texts = InMemoryChunkRepository()
        self.ledger = InMemoryDocumentLedger()
        self.generations = InMemoryNamespaceGenerations()
        self.stores = ChunkStores(self.index, InMemoryKeywordIndex(), self.texts)
        self.writer = GroupWriter(
            self.embedder, self.stores, self.ledger, self.generations, 0.0, 30.0
        )
        self.library = Library(self.stores, self.ledger, self.generations, NS, 0.0)
        self.repair = Repair(
            Reconciliation(self.embedder, self.stores, self.ledger, 0.0), self.generations
        )

    def prepared(self, document: RagDocument) -> Prepared:
        return Prepared(document, POLICY.split(document, NS, self.embedder.model))

    async def write(self, *items: RagDocument | Prepared, replace: bool = False):
        group = [i if isinstance(i, Prepared) else self.prepared(i) for i in items]
        call = GroupCall(NS, replace, EmbeddedTally(unheard), StageClock())
        return await self.writer.write(group, call)

    def chunk_ids(self, *documents: RagDocument) -> set[str]:
        return {c.chunk_id for d in documents for c in self.prepared(d).chunks}

    async def audit(self) -> NamespaceAudit:
        return await audit(self.stores, self.ledger, NS)

    async def generation(self) -> int:
        return (await self.generations.current(NS)).number


@pytest.fixture
def kit() -> Kit:
    return Kit()


def document(document_id: str, version: str = "v1", source: str | None = None) -> RagDocument:
    content = "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"{version}w{n}x{i}" for i in range(50)) for n in range(2)
    )
    return RagDocument(
        document_id=document_id,
        title=document_id,
        domain="tea_cultivation",
        content=content,
        source=Source(uri=source) if source else None,
    )


def kinds(outcomes: Sequence[DocumentOutcome]) -> list[Outcome]:
    return [outcome.outcome for outcome in outcomes]


# GroupWriter


async def test_new_documents_are_created_whole_in_every_store(kit: Kit) -> None:
    a, b = document("a"), document("b")

    outcomes = await kit.write(a, b)

    assert kinds(outcomes) == [Outcome.CREATED, Outcome.CREATED]
    assert [o.chunks for o in outcomes] == [len(kit.prepared(a).chunks)] * 2
    found = await kit.audit()
    assert set(found.texts) == found.vectors == found.keywords == kit.chunk_ids(a, b)
    assert {r.state for r in found.records.values()} == {DocumentState.COMMITTED}
    assert await kit.generation() == 1


async def test_a_groups_new_documents_are_looked_up_in_the_texts_side_by_side(kit: Kit) -> None:
    texts = LookupOverlapTexts()
    stores = ChunkStores(kit.index, InMemoryKeywordIndex(), texts)
    writer = GroupWriter(kit.embedder, stores, kit.ledger, kit.generations, 0.0, 30.0)
    group = [kit.prepared(document(name)) for name in "abcd"]

    outcomes = await writer.write(group, GroupCall(NS, False, EmbeddedTally(unheard), StageClock()))

    assert kinds(outcomes) == [Outcome.CREATED] * 4
    assert texts.most_at_once > 1


async def test_a_document_written_again_as_it_is_is_unchanged_and_embeds_nothing(
    kit: Kit,
) -> None:
    await kit.write(document("a"))
    embedded = len(kit.embedder.passages)

    assert kinds(await kit.write(document("a"))) == [Outcome.UNCHANGED]
    assert len(kit.embedder.passages) == embedded


async def test_a_changed_document_is_updated_and_its_old_chunks_are_gone(kit: Kit) -> None:
    await kit.write(document("a", "v1"))

    assert kinds(await kit.write(document("a", "v2"))) == [Outcome.UPDATED]

    found = await kit.audit()
    assert set(found.texts) == found.vectors == kit.chunk_ids(document("a", "v2"))
    assert found.is_consistent


async def test_an_id_another_source_holds_fails_naming_both_until_replaced(kit: Kit) -> None:
    await kit.write(document("readme", source="/repo/alpha/README.md"))
    beta = document("readme", "beta", source="/repo/beta/README.md")

    (clash,) = await kit.write(beta)
    assert clash.outcome is Outcome.FAILED
    assert clash.error is not None
    assert "/repo/alpha/README.md" in clash.error
    assert "/repo/beta/README.md" in clash.error
    assert (await kit.library.document("readme", NS)).summary.source == "/repo/alpha/README.md"

    assert kinds(await kit.write(beta, replace=True)) == [Outcome.UPDATED]
    assert (await kit.library.document("readme", NS)).summary.source == "/repo/beta/README.md"


async def test_a_store_that_fails_fails_the_group_and_leaves_the_previous_versions(
    kit: Kit,
) -> None:
    await kit.write(document("a", "v1"))
    kit.index.down = True

    outcomes = await kit.write(document("a", "v2"), document("b"))

    assert kinds(outcomes) == [Outcome.FAILED, Outcome.FAILED]
    assert all(o.error == "index down" for o in outcomes)
    found = await kit.audit()
    assert set(found.texts) == found.vectors == kit.chunk_ids(document("a", "v1"))
    assert list(found.records) == ["a"]
    assert found.records["a"].state is DocumentState.COMMITTED
    assert found.is_consistent


async def test_vectors_brought_with_a_document_are_stored_without_embedding(kit: Kit) -> None:
    item = kit.prepared(document("a"))
    item.vectors = await HashEmbedder().embed_passages([c.content for c in item.chunks])

    assert kinds(await kit.write(item)) == [Outcome.CREATED]

    assert kit.embedder.passages == []
    assert (await kit.audit()).vectors == kit.chunk_ids(document("a"))


async def test_a_document_another_writer_holds_fails_busy_and_the_others_are_written(
    kit: Kit,
) -> None:
    with writer_lease() as other:
        await kit.ledger.claim(NS, ["b"], other)
        outcomes = await kit.write(document("a"), document("b"))

    assert kinds(outcomes) == [Outcome.CREATED, Outcome.FAILED]
    assert outcomes[1].error is not None
    assert "being written by another call" in outcomes[1].error
    assert set((await kit.audit()).texts) == kit.chunk_ids(document("a"))


# Library


async def test_a_deleted_document_is_gone_from_every_store_and_the_listing(kit: Kit) -> None:
    await kit.write(document("a"), document("b"))
    before = await kit.generation()

    removed = await kit.library.delete_document("a", NS)

    assert removed == len(kit.prepared(document("a")).chunks)
    assert [d.document_id for d in await kit.library.documents(NS)] == ["b"]
    with pytest.raises(NotFoundError):
        await kit.library.document("a", NS)
    found = await kit.audit()
    assert set(found.texts) == found.vectors == found.keywords == kit.chunk_ids(document("b"))
    assert await kit.generation() == before + 1


async def test_a_dry_run_delete_reports_what_it_would_remove_and_changes_nothing(
    kit: Kit,
) -> None:
    await kit.write(document("a", source="/kb/docs/a.md"), document("b", source="/kb/b.md"))

    dry = await kit.library.delete(NS, ["ghost"], source_prefix="/kb/docs", dry_run=True)

    assert [d.document_id for d in dry.deleted] == ["a"]
    assert (dry.missing, dry.chunks) == (("ghost",), 0)
    assert len(await kit.library.documents(NS)) == 2


async def test_a_document_being_written_is_reported_busy_and_kept(kit: Kit) -> None:
    await kit.write(document("a"), document("b"))

    with writer_lease() as other:
        await kit.ledger.claim(NS, ["b"], other)
        report = await kit.library.delete(NS, ["a", "b"])
        with pytest.raises(DocumentBusyError):
            await kit.library.delete_document("b", NS)

    assert (report.busy, [d.document_id for d in report.deleted]) == (("b",), ["a"])
    assert [d.document_id for d in await kit.library.documents(NS)] == ["b"]


async def test_a_document_reads_back_its_current_chunks_in_order(kit: Kit) -> None:
    await kit.write(document("a", "v1"))
    await kit.write(document("a", "v2"))

    stored = await kit.library.document("a", NS)

    assert [c.position for c in stored.chunks] == list(range(len(stored.chunks)))
    assert {c.chunk_id for c in stored.chunks} == kit.chunk_ids(document("a", "v2"))
    assert stored.summary.chunks == len(stored.chunks)


async def test_a_dropped_namespace_holds_nothing(kit: Kit) -> None:
    await kit.write(document("a"), document("b"))
    stored = len(kit.chunk_ids(document("a"), document("b")))

    assert await kit.library.delete_namespace(NS) == stored

    found = await kit.audit()
    assert (found.texts, found.vectors, found.keywords, found.records) == ({}, set(), set(), {})
    assert await kit.library.documents(NS) == []


# Repair


async def test_reconcile_finds_lost_vectors_and_repairs_them_unless_dry(kit: Kit) -> None:
    await kit.write(document("a"))
    lost = sorted(kit.chunk_ids(document("a")))[:2]
    await kit.index.delete(namespace=NS, ids=lost)
    before = await kit.generation()

    dry = await kit.repair.reconcile(NS, dry_run=True)
    assert dry.texts_without_vectors == 2
    assert (await kit.audit()).texts_without_vectors == set(lost)
    assert await kit.generation() == before

    report = await kit.repair.reconcile(NS)
    assert report.repaired_documents == 1
    found = await kit.audit()
    assert found.vectors == kit.chunk_ids(document("a"))
    assert found.is_consistent
    assert await kit.generation() == before + 1


async def test_recover_undoes_the_write_a_stopped_writer_left(kit: Kit) -> None:
    await kit.write(document("a", "v1"))
    cut_short = kit.prepared(document("a", "v2"))
    with writer_lease() as stopped:
        claim = await kit.ledger.claim(NS, ["a"], stopped)
        provenance = Provenance(title="a", source=None, written_at=datetime.now(UTC))
        pending = claim.records["a"].begin(
            (c.chunk_id for c in cut_short.chunks), cut_short.fingerprint, provenance
        )
        await kit.ledger.save([pending], stopped)
        await kit.texts.upsert_many(cut_short.chunks)
    before = await kit.generation()

    assert await kit.repair.recover() == 1

    found = await kit.audit()
    assert set(found.texts) == found.vectors == kit.chunk_ids(document("a", "v1"))
    record = found.records["a"]
    assert record.state is DocumentState.COMMITTED
    assert record.fingerprint == fingerprint(sorted(kit.chunk_ids(document("a", "v1"))))
    assert await kit.generation() == before + 1

"""A knowledge base over time: ids that cannot clash silently, delete, list and sync."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.domain.ledger import Lease
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.provenance import Source
from retrieval.errors import InvalidRequestError, MassDeleteError, NotFoundError
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.deletion import Deletion
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.requests import SyncRequest
from retrieval.service.ingestion.sync import LibrarySync
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "kb"
LEASE = Lease(owner="test", host="test", pid=1)


@dataclass(frozen=True)
class Parts:
    """The writer, library and sync over one set of stores."""

    writer: IngestionService
    library: Library
    syncing: LibrarySync

    @property
    def ingest(self):
        return self.writer.ingest

    @property
    def sync(self):
        return self.syncing.sync

    @property
    def delete(self):
        return self.library.delete

    @property
    def documents(self):
        return self.library.documents

    @property
    def document(self):
        return self.library.document


class Stores:
    """One namespace's stores and ledger, shared by every service a test builds."""

    def __init__(self) -> None:
        self.index = InMemoryVectorIndex()
        self.keywords = InMemoryKeywordIndex()
        self.chunks = InMemoryChunkRepository()
        self.ledger = InMemoryDocumentLedger()

    def service(self, max_delete_share: float = 0.5) -> Parts:
        generations = InMemoryNamespaceGenerations()
        writer = IngestionService(
            HashEmbedder(),
            ChunkStores(self.index, self.keywords, self.chunks),
            self.ledger,
            generations,
            DEFAULT_DOMAINS,
            NS,
            ChunkingPolicy(max_words=60, overlap_words=10),
        )
        stores = ChunkStores(self.index, self.keywords, self.chunks)
        library = Library(stores, self.ledger, generations, NS, lease_wait_s=30.0)
        return Parts(writer, library, LibrarySync(writer, library, self.ledger, max_delete_share))

    async def chunk_documents(self) -> dict[str, set[str]]:
        """Every stored chunk's document, by where it is stored: all three must agree."""
        texts = {c async for page in self.chunks.list_chunks(NS) for c, _ in page}
        vectors = {c async for page in self.index.list_ids(NS) for c in page}
        keywords = {c async for page in self.keywords.list_ids(NS) for c in page}
        assert texts == vectors == keywords
        stored = await self.chunks.get_many(sorted(texts), NS)
        found: dict[str, set[str]] = {}
        for chunk in stored.values():
            found.setdefault(chunk.source or "", set()).add(chunk.document_id)
        return found


def from_file(path: str, content: str = "Tea leaves wilt in drought.", **fields) -> RagDocument:
    document_id = fields.pop("document_id", path.rsplit("/", 1)[-1].split(".")[0])
    return RagDocument(
        document_id=document_id,
        title=fields.pop("title", document_id),
        domain="tea_cultivation",
        content=content,
        source=Source(uri=path, file_type="markdown"),
        **fields,
    )


@pytest.fixture
def stores() -> Stores:
    return Stores()


async def test_a_second_file_with_the_same_id_is_refused_and_the_first_stays(
    stores: Stores,
) -> None:
    service = stores.service()
    (first,) = await service.ingest([from_file("/x/pkgA/README.md", "Alpha package.")])
    (second,) = await service.ingest([from_file("/x/pkgB/README.md", "Beta package.")])
    assert first.outcome is Outcome.CREATED
    assert second.outcome is Outcome.FAILED
    assert "/x/pkgA/README.md" in second.error
    assert "/x/pkgB/README.md" in second.error
    assert await stores.chunk_documents() == {"/x/pkgA/README.md": {"README"}}


async def test_an_identical_file_elsewhere_clashes_too(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file("/x/pkgA/README.md")])
    (second,) = await service.ingest([from_file("/x/pkgB/README.md")])
    assert second.outcome is Outcome.FAILED


async def test_replace_lets_a_file_take_the_id_on_purpose(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file("/x/pkgA/README.md", "Alpha package.")])
    (second,) = await service.ingest(
        [from_file("/x/pkgB/README.md", "Beta package.")], replace=True
    )
    assert second.outcome is Outcome.UPDATED
    assert await stores.chunk_documents() == {"/x/pkgB/README.md": {"README"}}
    (listed,) = await service.documents(NS)
    assert listed.source == "/x/pkgB/README.md"


async def test_a_record_from_before_provenance_is_adopted_by_its_file(stores: Stores) -> None:
    service = stores.service()
    legacy = RagDocument(
        document_id="README", title="README", domain="tea_cultivation", content="Old text."
    )
    await service.ingest([legacy])
    (record,) = (await stores.ledger.get_many(NS, ["README"])).values()
    await stores.ledger.claim(NS, ["README"], LEASE)
    await stores.ledger.save(
        [record.model_copy(update={"provenance": None, "previous_provenance": None})], LEASE
    )
    await stores.ledger.release(NS, ["README"], LEASE)
    (outcome,) = await service.ingest([from_file("/x/README.md", "Old text.")])
    assert outcome.outcome is Outcome.UPDATED
    assert await stores.chunk_documents() == {"/x/README.md": {"README"}}


async def test_the_unchanged_shortcut_still_applies_to_the_same_file(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file("/x/a.md")])
    (again,) = await service.ingest([from_file("/x/a.md")])
    assert again.outcome is Outcome.UNCHANGED


async def test_chunks_and_vectors_carry_their_source(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file("/kb/docs/a.md", "## Care\n\nWater the bushes.")])
    ids = [c async for page in stores.index.list_ids(NS) for c in page]
    (record,) = (await stores.index.fetch(ids, NS)).values()
    assert record.metadata["source_uri"] == "/kb/docs/a.md"
    assert record.metadata["source_prefixes"] == ["/", "/kb", "/kb/docs", "/kb/docs/a.md"]
    assert record.metadata["file_type"] == "markdown"
    assert record.metadata["section"] == "Care"
    (chunk,) = (await stores.chunks.get_many(ids, NS)).values()
    assert (chunk.source, chunk.file_type, chunk.section) == ("/kb/docs/a.md", "markdown", "Care")


FILES = st.lists(
    st.tuples(
        st.sampled_from(["/r/a", "/r/b", "/s/a", "/s/b/c"]),
        st.sampled_from(["README.md", "guide.md", "notes.txt"]),
        st.sampled_from(["one", "two", "three"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=8,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(FILES)
def test_no_sequence_of_ingests_of_distinct_files_loses_one(steps: list) -> None:
    """Each step ingests one file (its id from its name alone, so different folders clash),
    in one call or together with the next; every file that was ever written stays whole
    until the same file is written again."""

    async def run() -> None:
        stores = Stores()
        service = stores.service()
        owner: dict[str, str] = {}
        batch: list[RagDocument] = []
        for folder, name, text, flush in steps:
            document = from_file(f"{folder}/{name}", f"{text} from {folder}/{name}")
            if document.document_id in {d.document_id for d in batch}:
                continue
            batch.append(document)
            if flush:
                await write(service, batch, owner)
                batch = []
        await write(service, batch, owner)
        found = await stores.chunk_documents()
        assert dict(found.items()) == {
            source: {document_id} for document_id, source in owner.items()
        }

    asyncio.run(run())


async def write(service: IngestionService, batch: list[RagDocument], owner: dict) -> None:
    for outcome in await service.ingest(batch) if batch else []:
        if outcome.outcome is not Outcome.FAILED:
            owner[outcome.document_id] = outcome.source
        else:
            assert owner[outcome.document_id] != outcome.source


async def test_delete_by_id_and_by_source_prefix(stores: Stores) -> None:
    service = stores.service()
    await service.ingest(
        [from_file(p) for p in ("/kb/docs/a.md", "/kb/docs/sub/b.md", "/kb/docs-old/c.md")]
        + [from_file("/kb/d.md")]
    )
    dry = await service.delete(NS, source_prefix="/kb/docs", dry_run=True)
    assert sorted(d.document_id for d in dry.deleted) == ["a", "b"]
    assert len(await service.documents(NS)) == 4
    report = await service.delete(NS, ["d"], source_prefix="/kb/docs/")
    assert sorted(d.document_id for d in report.deleted) == ["a", "b", "d"]
    assert report.chunks == 3
    assert await stores.chunk_documents() == {"/kb/docs-old/c.md": {"c"}}
    missing = await service.delete(NS, ["nothing"])
    assert missing.missing == ("nothing",)


async def test_delete_needs_a_target_and_a_valid_prefix(stores: Stores) -> None:
    service = stores.service()
    with pytest.raises(InvalidRequestError, match="document_ids"):
        await service.delete(NS)
    with pytest.raises(InvalidRequestError, match="source_prefix"):
        await service.delete(NS, source_prefix="relative/path")


async def test_documents_lists_title_source_chunks_and_time(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file("/kb/a.md", title="Alpha"), from_file("/other/b.md")])
    listed = await service.documents(NS)
    assert [(d.document_id, d.title, d.source, d.chunks) for d in listed] == [
        ("a", "Alpha", "/kb/a.md", 1),
        ("b", "b", "/other/b.md", 1),
    ]
    assert all(d.updated_at is not None and not d.pending for d in listed)
    assert [d.document_id for d in await service.documents(NS, source_prefix="/kb")] == ["a"]


async def test_document_gives_the_current_version_s_chunks_in_order(stores: Stores) -> None:
    service = stores.service()
    words = " ".join(f"word{i}" for i in range(150))
    await service.ingest([from_file("/kb/a.md", "Old text.", title="Alpha")])
    await service.ingest([from_file("/kb/a.md", words, title="Alpha")])
    stored = await service.document("a", NS)
    assert (stored.summary.title, stored.summary.chunks) == ("Alpha", len(stored.chunks))
    assert [chunk.position for chunk in stored.chunks] == list(range(len(stored.chunks)))
    assert len(stored.chunks) > 1
    assert "Old text." not in " ".join(chunk.content for chunk in stored.chunks)
    with pytest.raises(NotFoundError, match="'missing'"):
        await service.document("missing", NS)


async def test_sync_ingests_new_and_changed_and_deletes_what_is_gone(stores: Stores) -> None:
    service = stores.service()
    roots = ["/kb"]
    first = [from_file(f"/kb/{name}.md") for name in ("a", "b", "c", "d")]
    await service.sync(SyncRequest(first, roots, NS))
    second = [
        from_file("/kb/a.md"),
        from_file("/kb/b.md", "Edited text."),
        from_file("/kb/e.md"),
        from_file("/kb/renamed.md", document_id="renamed"),
    ]
    dry = await service.sync(SyncRequest(second, roots, NS, dry_run=True, allow_mass_delete=True))
    assert await stores.chunk_documents() == {f"/kb/{n}.md": {n} for n in "abcd"}
    report = await service.sync(SyncRequest(second, roots, NS))
    assert dry.outcomes == report.outcomes
    assert {o.document_id: o.outcome for o in report.outcomes} == {
        "a": Outcome.UNCHANGED,
        "b": Outcome.UPDATED,
        "e": Outcome.CREATED,
        "renamed": Outcome.CREATED,
        "c": Outcome.DELETED,
        "d": Outcome.DELETED,
    }
    assert set(await stores.chunk_documents()) == {
        f"/kb/{n}.md" for n in ("a", "b", "e", "renamed")
    }


async def test_sync_keeps_documents_outside_its_roots_and_of_unreadable_files(
    stores: Stores,
) -> None:
    service = stores.service(max_delete_share=1.0)
    await service.ingest(
        [from_file("/kb/a.md"), from_file("/kb/broken.md"), from_file("/kb-other/c.md")]
    )
    kept = {"/kb/broken.md"}
    report = await service.sync(SyncRequest([from_file("/kb/a.md")], ["/kb"], NS, unreadable=kept))
    assert report.count(Outcome.DELETED) == 0
    assert set(await stores.chunk_documents()) == {"/kb/a.md", "/kb/broken.md", "/kb-other/c.md"}


async def test_a_sync_that_would_empty_the_namespace_stops_before_writing(stores: Stores) -> None:
    service = stores.service()
    await service.ingest([from_file(f"/kb/{n}.md") for n in "abc"])
    with pytest.raises(MassDeleteError, match="RETRIEVAL_SYNC_MAX_DELETE_SHARE"):
        await service.sync(SyncRequest([from_file("/kb/new.md")], ["/kb"], NS))
    assert set(await stores.chunk_documents()) == {f"/kb/{n}.md" for n in "abc"}
    allowed = SyncRequest([from_file("/kb/new.md")], ["/kb"], NS, allow_mass_delete=True)
    report = await service.sync(allowed)
    assert report.count(Outcome.DELETED) == 3


async def test_sync_refuses_a_document_from_outside_its_roots(stores: Stores) -> None:
    with pytest.raises(InvalidRequestError, match="under no root"):
        await stores.service().sync(SyncRequest([from_file("/elsewhere/a.md")], ["/kb"], NS))


async def test_a_deletion_keeps_a_document_its_check_no_longer_wants(stores: Stores) -> None:
    """Sync asks again, under the lease, whether a record still comes from under a root: a
    document re-ingested from elsewhere meanwhile is kept."""
    await stores.service().ingest([from_file("/kb/a.md")])
    deletion = Deletion(
        ChunkStores(stores.index, stores.keywords, stores.chunks), stores.ledger, 1.0
    )
    kept = await deletion.run(NS, ["a"], lambda record: record.source == "/elsewhere/a.md")
    assert kept.deleted == ()
    assert await stores.chunk_documents() == {"/kb/a.md": {"a"}}

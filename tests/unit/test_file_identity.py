"""One file is one document in a namespace, whichever folder it was reached from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.adapters.files.document_files import read_documents
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.domain.ledger import DocumentRecord
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument, namespace_or_default
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.file_identity import identified
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
from retrieval.service.ingestion.outcomes import Outcome
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


def knowledge_base() -> tuple[LocalFiles, Library]:
    index, keywords, chunks = (
        InMemoryVectorIndex(),
        InMemoryKeywordIndex(),
        InMemoryChunkRepository(),
    )
    ledger, generations = InMemoryDocumentLedger(), InMemoryNamespaceGenerations()
    writer = IngestionService(
        HashEmbedder(),
        ChunkStores(index, keywords, chunks),
        ledger,
        generations,
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(),
    )
    library = Library(ChunkStores(index, keywords, chunks), ledger, generations, NS, 30.0)
    sync = LibrarySync(writer, library, ledger, max_delete_share=1.0)
    return LocalFiles(ServiceIntake(writer, sync), sync_scope), library


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {path.stem}\n\n{text}\n", encoding="utf-8")


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    write(tmp_path / "kb" / "alpha.md", "Tea leaves wilt in drought.")
    write(tmp_path / "kb" / "misc" / "beta.md", "Frost browns the young shoots.")
    return tmp_path / "kb"


async def ingest(files: LocalFiles, *paths: Path) -> None:
    await files.ingest(read_documents(paths, domain="tea_cultivation"), NS)


async def sync(files: LocalFiles, *paths: Path) -> None:
    await files.sync(paths, read_documents(paths, domain="tea_cultivation"), NS)


async def held(library: Library) -> dict[str, str | None]:
    return {d.document_id: d.source for d in await library.documents(NS)}


async def test_a_subfolder_ingested_after_its_parent_updates_the_same_documents(kb: Path) -> None:
    files, library = knowledge_base()

    await ingest(files, kb)
    await ingest(files, kb / "misc")

    assert await held(library) == {
        "alpha": str(kb / "alpha.md"),
        "misc--beta": str(kb / "misc" / "beta.md"),
    }


async def test_a_parent_ingested_after_its_subfolder_keeps_the_subfolder_ids(kb: Path) -> None:
    files, library = knowledge_base()

    await ingest(files, kb / "misc")
    await sync(files, kb)

    assert await held(library) == {
        "alpha": str(kb / "alpha.md"),
        "beta": str(kb / "misc" / "beta.md"),
    }


async def test_a_new_file_whose_id_another_file_holds_takes_a_suffix(kb: Path) -> None:
    files, library = knowledge_base()
    write(kb / "beta.md", "Blister blight spreads in the monsoon.")

    await ingest(files, kb / "misc")
    await ingest(files, kb)

    documents = await held(library)
    assert documents.pop("beta") == str(kb / "misc" / "beta.md")
    assert documents.pop("alpha") == str(kb / "alpha.md")
    [(suffixed, source)] = documents.items()
    assert suffixed.startswith("beta-")
    assert source == str(kb / "beta.md")


async def test_a_sync_of_a_subfolder_touches_only_what_lies_under_it(kb: Path) -> None:
    files, library = knowledge_base()
    await ingest(files, kb)
    (kb / "misc" / "beta.md").unlink()
    write(kb / "misc" / "gamma.md", "Pruning in winter.")

    await sync(files, kb / "misc")

    assert await held(library) == {
        "alpha": str(kb / "alpha.md"),
        "gamma": str(kb / "misc" / "gamma.md"),
    }


async def test_a_file_of_another_folder_holding_the_id_is_still_a_clash(tmp_path: Path) -> None:
    files, library = knowledge_base()
    for package in ("pkgA", "pkgB"):
        write(tmp_path / package / "README.md", f"{package} reads sensors.")

    await ingest(files, tmp_path / "pkgA")
    report = await files.ingest(read_documents([tmp_path / "pkgB"], domain="tea_cultivation"), NS)

    [outcome] = report.outcomes
    assert outcome.outcome is Outcome.FAILED
    assert "pkgA/README.md" in (outcome.error or "")
    assert await held(library) == {"README": str(tmp_path / "pkgA" / "README.md")}


async def test_an_id_a_file_sets_itself_is_kept(kb: Path) -> None:
    files, library = knowledge_base()
    await ingest(files, kb)
    (kb / "misc" / "beta.md").write_text(
        "---\ndocument_id: beta-notes\n---\n# Beta\n\nFrost.\n", encoding="utf-8"
    )

    await sync(files, kb / "misc")

    assert await held(library) == {
        "alpha": str(kb / "alpha.md"),
        "beta-notes": str(kb / "misc" / "beta.md"),
    }


@pytest.mark.parametrize("namespace", ["", "  "])
async def test_an_empty_or_blank_namespace_is_refused(kb: Path, namespace: str) -> None:
    files, library = knowledge_base()
    read = read_documents([kb], domain="tea_cultivation")

    for attempt in (files.ingest(read, namespace), files.sync([kb], read, namespace)):
        with pytest.raises(InvalidRequestError) as refused:
            await attempt
        assert refused.value.field == "namespace"
    assert await library.documents(NS) == []


@pytest.mark.parametrize("namespace", ["", " ", "\t"])
def test_the_services_take_no_empty_or_blank_namespace_for_the_default(namespace: str) -> None:
    assert namespace_or_default(None, "default") == "default"
    with pytest.raises(InvalidRequestError) as refused:
        namespace_or_default(namespace, "default")
    assert refused.value.field == "namespace"


async def test_a_file_a_namespace_holds_under_an_earlier_id_keeps_it(tmp_path: Path) -> None:
    files, library = knowledge_base()
    path = tmp_path / "kb" / "guides" / "Frost risk.md"
    write(path, "Frost scorches the plucking table.")
    read = read_documents([tmp_path / "kb"], domain="tea_cultivation")
    [document] = read.documents
    earlier = document.model_copy(update={"document_id": "guides--Frost-risk"})
    nothing = read_documents([], domain="tea_cultivation")
    await files.ingest(nothing, NS, documents=[earlier])

    report = await files.ingest(read, NS)

    assert [(o.document_id, o.outcome) for o in report.outcomes] == [
        ("guides--Frost-risk", Outcome.UNCHANGED)
    ]
    assert await held(library) == {"guides--Frost-risk": str(path)}


class ListingCounted(InMemoryDocumentLedger):
    """The in-memory ledger, counting the namespace listings it serves."""

    listings = 0

    def list_records(self, namespace: str) -> AsyncIterator[list[DocumentRecord]]:
        self.listings += 1
        return super().list_records(namespace)


async def test_naming_a_new_file_reads_only_its_own_records(tmp_path: Path) -> None:
    ledger = ListingCounted()
    held = [
        RagDocument(document_id=f"note-{n}", title="Note", domain="tea_cultivation", content="Tea.")
        for n in range(50)
    ]
    writer = IngestionService(
        HashEmbedder(),
        ChunkStores(InMemoryVectorIndex(), InMemoryKeywordIndex(), InMemoryChunkRepository()),
        ledger,
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(),
    )
    await writer.ingest(held, NS)
    write(tmp_path / "kb" / "new.md", "Frost on the tea.")
    loaded = read_documents([tmp_path / "kb"], domain="tea_cultivation")

    named = await identified(ledger, loaded.documents, NS, replace=False)

    assert [document.document_id for document in named] == ["new"]
    assert ledger.listings == 0

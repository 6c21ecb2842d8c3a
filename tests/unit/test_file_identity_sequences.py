"""Any sequence of ingests and syncs of the folders of one tree, parents and subfolders in
any order, leaves exactly one document per file reached, on both vector indexes."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.files.document_files import read_documents
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.ports import KeywordIndex, VectorIndex
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
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
TREE = (
    "README.md",
    "alpha.md",
    "beta.md",
    "Résumé.md",
    "resume.md",
    "misc/README.md",
    "misc/beta.md",
    "misc/deep/beta.md",
    "misc/deep/gamma notes.md",
    "other/alpha.md",
    "other/日本.md",
)
FOLDERS = ("", "misc", "misc/deep", "other", "other/日本.md")
STEPS = st.lists(
    st.tuples(st.sampled_from(("ingest", "sync")), st.sampled_from(FOLDERS), st.booleans()),
    min_size=1,
    max_size=6,
)
Indexes = Callable[[], tuple[VectorIndex, KeywordIndex]]
BACKENDS: dict[str, Indexes] = {
    "in-memory": lambda: (InMemoryVectorIndex(), InMemoryKeywordIndex()),
    "embedded": lambda: (EmbeddedVectorIndex(), Bm25KeywordIndex()),
}


class KnowledgeBase:
    def __init__(self, index: VectorIndex, keywords: KeywordIndex) -> None:
        self.index = index
        chunks, ledger = InMemoryChunkRepository(), InMemoryDocumentLedger()
        generations = InMemoryNamespaceGenerations()
        writer = IngestionService(
            HashEmbedder(),
            ChunkStores(index, keywords, chunks),
            ledger,
            generations,
            DEFAULT_DOMAINS,
            NS,
            ChunkingPolicy(),
        )
        self.library = Library(ChunkStores(index, keywords, chunks), ledger, generations, NS, 30.0)
        sync = LibrarySync(writer, self.library, ledger, max_delete_share=1.0)
        self.files = LocalFiles(ServiceIntake(writer, sync), sync_scope)

    async def run(self, action: str, path: Path) -> None:
        read = read_documents([path], domain="tea_cultivation")
        assert not read.failures
        if action == "ingest":
            await self.files.ingest(read, NS)
        else:
            await self.files.sync([path], read, NS)

    async def sources(self) -> list[str | None]:
        return sorted(d.source or "" for d in await self.library.documents(NS))

    async def indexed(self) -> set[str]:
        return {
            record_id.partition("#")[0]
            async for page in self.index.list_ids(NS)
            for record_id in page
        }


def files_of(path: Path) -> list[Path]:
    return sorted(path.rglob("*.md")) if path.is_dir() else [path]


def plant(root: Path) -> None:
    for n, name in enumerate(TREE):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.stem}\n\nNote {n} on tea: {name}.\n", encoding="utf-8")


@pytest.mark.parametrize("backend", BACKENDS)
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS)
def test_any_sequence_of_ingests_and_syncs_leaves_one_document_per_file(
    backend: str, steps: list[tuple[str, str, bool]]
) -> None:
    async def run(root: Path) -> None:
        plant(root)
        kb = KnowledgeBase(*BACKENDS[backend]())
        reached: set[Path] = set()
        for action, folder, edit in steps:
            path = root / folder
            if edit:
                first = files_of(path)[0]
                first.write_text(
                    f"{first.read_text(encoding='utf-8')}\nEdited.\n", encoding="utf-8"
                )
            await kb.run(action, path)
            reached |= set(files_of(path))
            assert await kb.sources() == sorted(str(p) for p in reached)
        listed = {d.document_id for d in await kb.library.documents(NS)}
        assert await kb.indexed() == listed

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(Path(folder).resolve()))

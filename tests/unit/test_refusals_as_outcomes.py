"""``refused_as_outcomes`` in process: a document the checks refuse is a FAILED outcome of its
own (reason and field) and the others are written; without it one bad document refuses the
request whole and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
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
ROOT = Path("/kb")


class Parts:
    """The writer, library and sync over one set of in-memory stores."""

    def __init__(self) -> None:
        index, keywords = InMemoryVectorIndex(), InMemoryKeywordIndex()
        self.chunks = InMemoryChunkRepository()
        ledger, generations = InMemoryDocumentLedger(), InMemoryNamespaceGenerations()
        self.embedder = HashEmbedder()
        self.writer = IngestionService(
            self.embedder, ChunkStores(index, keywords, self.chunks), ledger, generations,
            DEFAULT_DOMAINS, NS, ChunkingPolicy(),
        )  # fmt: skip
        self.library = Library(
            ChunkStores(index, keywords, self.chunks), ledger, generations, NS, 30.0
        )
        self.sync = LibrarySync(self.writer, self.library, ledger, max_delete_share=1.0)

    async def stored(self) -> dict[str, str]:
        """Content by document id."""
        found = {}
        for summary in await self.library.documents(NS):
            document = await self.library.document(summary.document_id, NS)
            found[summary.document_id] = document.chunks[0].content
        return found


@pytest.fixture
def parts() -> Parts:
    return Parts()


def document(
    document_id: str, content: str = "Tea leaves wilt in drought.", **fields
) -> RagDocument:
    return RagDocument.model_validate(
        {
            "document_id": document_id,
            "title": document_id,
            "domain": "tea_cultivation",
            "content": content,
            "source": {"uri": str(ROOT / f"{document_id}.md"), "file_type": "markdown"},
            **fields,
        }
    )


BAD = document("b", metadata={"position": "3"})


async def test_a_refused_document_is_a_failed_outcome_of_its_own(parts: Parts) -> None:
    outcomes = await parts.writer.ingest(
        [document("a"), BAD, document("c")], NS, refused_as_outcomes=True
    )

    assert [(o.document_id, o.outcome) for o in outcomes] == [
        ("a", Outcome.CREATED),
        ("b", Outcome.FAILED),
        ("c", Outcome.CREATED),
    ]
    refused = outcomes[1]
    assert (refused.refused, refused.field, refused.source) == (True, "metadata", "/kb/b.md")
    assert refused.error is not None
    assert "reserved" in refused.error
    assert not outcomes[0].refused
    assert set(await parts.stored()) == {"a", "c"}


async def test_without_the_flag_one_refused_document_refuses_the_request(parts: Parts) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        await parts.writer.ingest([document("a"), BAD, document("c")], NS)

    assert raised.value.field == "metadata"
    assert "'b'" in str(raised.value)
    assert parts.embedder.passages == []
    assert await parts.chunks.count() == 0


async def test_an_id_given_twice_refuses_the_request_even_with_the_flag(parts: Parts) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        await parts.writer.ingest([document("a"), document("a")], NS, refused_as_outcomes=True)

    assert raised.value.field == "document_id"
    assert await parts.chunks.count() == 0


async def test_a_sync_keeps_what_the_source_of_a_refused_document_held(parts: Parts) -> None:
    roots = [str(ROOT)]
    await parts.sync.sync(SyncRequest([document("a"), document("b"), document("c")], roots, NS))

    report = await parts.sync.sync(
        SyncRequest([document("a", "Changed."), BAD], roots, NS, refused_as_outcomes=True)
    )

    assert [(o.document_id, o.outcome) for o in report.outcomes] == [
        ("a", Outcome.UPDATED),
        ("b", Outcome.FAILED),
        ("c", Outcome.DELETED),
    ]
    assert report.outcomes[1].field == "metadata"
    stored = await parts.stored()
    assert set(stored) == {"a", "b"}
    assert stored["a"].endswith("Changed.")
    assert stored["b"].endswith("wilt in drought.")


async def test_a_dry_run_sync_plans_around_a_refused_document(parts: Parts) -> None:
    report = await parts.sync.sync(
        SyncRequest([BAD, document("a")], [str(ROOT)], NS, dry_run=True, refused_as_outcomes=True)
    )

    assert [(o.document_id, o.outcome, o.refused) for o in report.outcomes] == [
        ("b", Outcome.FAILED, True),
        ("a", Outcome.CREATED, False),
    ]
    assert await parts.stored() == {}


async def test_without_the_flag_a_sync_with_a_refused_document_changes_nothing(
    parts: Parts,
) -> None:
    roots = [str(ROOT)]
    await parts.sync.sync(SyncRequest([document("a"), document("c")], roots, NS))

    with pytest.raises(InvalidRequestError) as raised:
        await parts.sync.sync(SyncRequest([document("a", "Changed."), BAD], roots, NS))

    assert raised.value.field == "metadata"
    assert set(await parts.stored()) == {"a", "c"}

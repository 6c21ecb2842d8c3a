"""A write holds its documents' leases for as long as it runs, however long its embedding takes:
real time, an embedder that takes a tenth of a second a call, a lease of four tenths."""

from __future__ import annotations

import asyncio

from retrieval.domain.ledger import Lease
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.outcomes import Outcome
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

NS = "kb"


class SlowPassages(HashEmbedder):
    """Each call of passages takes ``delay_s``."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s

    async def embed_passages(self, texts):
        await asyncio.sleep(self.delay_s)
        return await super().embed_passages(texts)


async def test_a_long_embedding_keeps_its_lease() -> None:
    """The write renews its lease between embedding calls: a writer of the same document
    that arrives after the lease time (but while the embedding runs) still finds it held."""
    ledger = InMemoryDocumentLedger(lease_s=0.4)
    service = IngestionService(
        SlowPassages(0.1),
        ChunkStores(InMemoryVectorIndex(), InMemoryKeywordIndex(), InMemoryChunkRepository()),
        ledger,
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(max_words=20, overlap_words=0),
        lease_renew_s=0.1,
    )
    text = "\n\n".join(f"Paragraph {n} about tea leaves and their care." for n in range(2500))
    long = RagDocument(document_id="long", title="Long", domain="tea_cultivation", content=text)
    writing = asyncio.create_task(service.ingest([long]))
    await asyncio.sleep(0.8)
    other = await ledger.claim(NS, ["long"], Lease(owner="other", host="other", pid=9))
    assert "long" in other.held
    (outcome,) = await writing
    assert outcome.outcome is Outcome.CREATED

"""Ingestion and reconciliation on the production adapters: the real Pinecone SDK against the
loopback stand-in, MongoDB (chunk texts and ledger) on a real wire-protocol server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.freshness import PineconeLsns
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores, audit
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval_testkit import HashEmbedder, InMemoryKeywordIndex
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.pinecone_standin import PineconeStandIn

NS = "production"
DIMENSION = 16


def document(version: str) -> RagDocument:
    body = "\n\n".join(
        f"## Part {n}\n\n" + " ".join(f"{version}w{n}x{i}" for i in range(50)) for n in range(3)
    )
    return RagDocument(
        document_id="pruning", title="Pruning", domain="tea_cultivation", content=body
    )


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=DIMENSION) as running:
        yield running


@pytest.fixture
async def pinecone(standin: PineconeStandIn) -> AsyncIterator[PineconeVectorIndex]:
    index = PineconeVectorIndex(
        PineconeConnection(
            api_key=standin.api_key,
            index_host=standin.url,
            control_host=standin.url,
            request_timeout=2.0,
            call_timeout=10.0,
        ),
        PineconeLsns(),
    )
    yield index
    await index.close()


async def test_updates_and_repairs_go_through_pinecone_and_mongodb(
    pinecone: PineconeVectorIndex,
    mongo_repository: MongoChunkRepository,
    mongo_ledger: MongoDocumentLedger,
) -> None:
    embedder = HashEmbedder(dimension=DIMENSION)
    index = ModelCheckedIndex(pinecone, model=embedder.model, dimension=DIMENSION)
    keywords = InMemoryKeywordIndex()
    stores = ChunkStores(index, keywords, mongo_repository)
    generations = InMemoryNamespaceGenerations()
    ingestion = IngestionService(
        embedder,
        ChunkStores(index, keywords, mongo_repository),
        mongo_ledger,
        generations,
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(max_words=60, overlap_words=10),
    )
    assert [o.outcome for o in await ingestion.ingest([document("v1")])] == [Outcome.CREATED]
    assert [o.outcome for o in await ingestion.ingest([document("v2")])] == [Outcome.UPDATED]
    current = {chunk.chunk_id for chunk in ingestion.split(document("v2"), NS)}
    found = await audit(stores, mongo_ledger, NS)
    assert found.vectors == set(found.texts) == current
    assert found.is_consistent

    lost = sorted(current)[:2]
    await pinecone.delete(namespace=NS, ids=lost)
    repair = Repair(Reconciliation(embedder, stores, mongo_ledger, 30.0), generations)
    assert (await repair.reconcile(NS, dry_run=True)).texts_without_vectors == 2
    report = await repair.reconcile(NS)
    assert report.repaired_documents == 1
    found = await audit(stores, mongo_ledger, NS)
    assert found.vectors == current
    assert found.is_consistent
    assert [o.outcome for o in await ingestion.ingest([document("v2")])] == [Outcome.UNCHANGED]

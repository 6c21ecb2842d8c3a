"""A namespace backed up from the embedded stack (embedded vector index, BM25, MongoDB) and
restored onto Pinecone (the stand-ins) and MongoDB, then back: the same chunks, the same dense
results, audit-clean stores at each end."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from dependency_injector import providers

from retrieval.container import Container
from retrieval.domain.models import RetrievalOptions
from retrieval.lifecycle import Application, resolve, running
from retrieval.service.ingestion.consistency import audit
from retrieval.settings import Settings
from retrieval_testkit import HashEmbedder
from retrieval_testkit.estate_notes import QUESTIONS, estate_notes
from retrieval_testkit.pinecone_standin import PineconeStandIn

DIMENSION = 64
DENSE = RetrievalOptions(mode="dense")
NS = "garden"


@pytest.fixture
def pinecone() -> Iterator[dict[str, str]]:
    with (
        PineconeStandIn(dimension=DIMENSION) as dense,
        PineconeStandIn(vector_type="sparse", api_key=dense.api_key) as sparse,
    ):
        yield {
            "index_backend": "pinecone",
            "pinecone_api_key": dense.api_key,
            "pinecone_index_host": dense.url,
            "pinecone_sparse_index_host": sparse.url,
            "pinecone_control_host": dense.url,
        }


@asynccontextmanager
async def stack(
    data_dir: Path, mongo_uri: str, **settings: object
) -> AsyncIterator[tuple[Application, Container]]:
    configured = Settings(
        _env_file=None,
        data_dir=data_dir,
        mongodb_uri=mongo_uri,
        mongodb_database=f"t{uuid.uuid4().hex[:12]}",
        **settings,
    )
    container = Container(settings=configured)
    container.override_providers(model_embedder=providers.Object(HashEmbedder(DIMENSION)))
    async with running(configured, container) as app:
        yield app, container


async def state(app: Application, container: Container, namespace: str) -> tuple:
    """The chunk ids of each document and the dense scores of each question (which of two
    chunks tied for a place comes first is the backend's); asserts the stores are clean."""
    stores = await resolve(container.chunk_stores)
    ledger = await resolve(container.document_ledger)
    assert (await audit(stores, ledger, namespace)).is_consistent
    chunks = {
        d.document_id: tuple(
            c.chunk_id for c in (await app.library.document(d.document_id, namespace)).chunks
        )
        for d in await app.library.documents(namespace)
    }
    answers = [
        [
            round(m.score, 5)
            for m in (
                await app.retrieval.retrieve(q, namespace=namespace, top_k=5, options=DENSE)
            ).matches
        ]
        for q in QUESTIONS
    ]
    return chunks, answers


async def test_embedded_to_pinecone_and_mongodb_and_back(
    tmp_path: Path, mongo_uri: str, pinecone: dict[str, str]
) -> None:
    there, back = tmp_path / "there.backup", tmp_path / "back.backup"
    async with stack(tmp_path / "embedded", mongo_uri) as (app, container):
        await app.ingestion.ingest(estate_notes(20), NS)
        await app.backups.backup(NS, there)
        original = await state(app, container, NS)
    async with stack(tmp_path / "pinecone", mongo_uri, **pinecone) as (app, container):
        report = await app.backups.restore(there)
        assert (report.restored, report.embedded_again) == (20, False)
        assert await state(app, container, NS) == original
        await app.backups.backup(NS, back)
    async with stack(tmp_path / "embedded-again", mongo_uri) as (app, container):
        await app.backups.restore(back, "returned")
        assert await state(app, container, "returned") == original

"""No call on one namespace returns or touches another's data, on every adapter with a contract
suite: hypothesis writes documents into several namespaces (the same document and chunk ids
in more than one), deletes documents and namespaces, and after every step asks each
namespace for everything (queries, filters, id lookups, listings, counts and stats): each
answers exactly what was written to it and not deleted, and its records say so."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pymongo import AsyncMongoClient

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.mongo.chunk_repository import MongoChunkRepository
from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations
from retrieval.adapters.pinecone.freshness import SPARSE, PineconeLsns
from retrieval.adapters.pinecone.sparse_keyword_index import PineconeSparseKeywordIndex
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease
from retrieval.domain.models import RagChunk
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import NamespaceNotFoundError
from retrieval.ports import ChunkRepository, KeywordIndex, VectorIndex
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval_testkit import (
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryNamespaceGenerations,
    InMemoryVectorIndex,
)
from retrieval_testkit.pinecone_standin import PineconeStandIn

NAMES = ("a", "b", "c")
DOCUMENTS = ("d1", "d2", "d3")
LEASE = Lease(owner="isolation", host="test", pid=1)
FEW = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

Step = tuple  # ("write", name, documents, chunks) | ("delete_document", name, document) | ...
STEPS = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"),
            st.sampled_from(NAMES),
            st.lists(st.sampled_from(DOCUMENTS), min_size=1, max_size=3, unique=True),
            st.integers(1, 3),
        ),
        st.tuples(st.just("delete_document"), st.sampled_from(NAMES), st.sampled_from(DOCUMENTS)),
        st.tuples(st.just("delete_namespace"), st.sampled_from(NAMES)),
    ),
    min_size=1,
    max_size=7,
)


def chunk_ids(document: str, chunks: int) -> list[str]:
    return [f"{document}#{position}" for position in range(chunks)]


EVERY_CHUNK = [i for document in DOCUMENTS for i in chunk_ids(document, 3)]


@dataclass
class Model:
    """What each namespace should hold: chunk ids by document."""

    namespaces: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def held(self, namespace: str) -> set[str]:
        return {chunk for ids in self.namespaces.get(namespace, {}).values() for chunk in ids}

    def documents(self, namespace: str) -> set[str]:
        return set(self.namespaces.get(namespace, {}))

    def chunks(self, namespace: str, document: str) -> set[str]:
        return set(self.namespaces.get(namespace, {}).get(document, []))


class Driver(Protocol):
    """One store, asked the same things whatever its port; None: the port cannot answer."""

    async def write(self, namespace: str, document: str, ids: list[str]) -> None: ...

    async def delete_document(
        self, namespace: str, document: str, ids: list[str]
    ) -> int | None: ...

    async def delete_namespace(self, namespace: str) -> int | None: ...

    async def answers(self, namespace: str, model: Model) -> None:
        """Assert that every read of ``namespace`` gives what ``model`` holds there."""
        ...


def tag(namespace: str, document: str) -> dict[str, str]:
    return {"ns": namespace, "document": document}


def vector(chunk: str) -> tuple[float, ...]:
    return (1.0, len(chunk) / 10, float(chunk[1]), float(chunk[-1]) + 0.5)


class VectorIndexDriver:
    def __init__(self, index: VectorIndex) -> None:
        self.index = index

    async def write(self, namespace: str, document: str, ids: list[str]) -> None:
        records = [
            VectorRecord(id=i, values=vector(i), metadata=tag(namespace, document)) for i in ids
        ]
        await self.index.upsert(records, namespace)

    async def delete_document(self, namespace: str, document: str, ids: list[str]) -> None:
        await self.index.delete(namespace=namespace, ids=ids)

    async def delete_namespace(self, namespace: str) -> None:
        await self.index.delete(namespace=namespace, delete_all=True)

    async def answers(self, namespace: str, model: Model) -> None:
        held = model.held(namespace)
        try:
            found = await self.index.query((1, 0, 0, 0), top_k=50, namespace=namespace)
        except NamespaceNotFoundError:
            found = []
        assert {match.id for match in found} == held
        assert all(match.metadata["ns"] == namespace for match in found)
        for document in DOCUMENTS:
            flt = {"document": document}
            try:
                only = await self.index.query(
                    (1, 0, 0, 0), top_k=50, namespace=namespace, filter=flt
                )
            except NamespaceNotFoundError:
                only = []
            assert {match.id for match in only} == model.chunks(namespace, document)
        fetched = await self.index.fetch(EVERY_CHUNK, namespace)
        assert set(fetched) == held
        assert all(record.metadata["ns"] == namespace for record in fetched.values())
        assert {i async for page in self.index.list_ids(namespace) for i in page} == held
        stats = await self.index.stats()
        counted = stats.namespaces.get(namespace)
        assert (counted.vector_count if counted else 0) == len(held)


class KeywordIndexDriver:
    def __init__(self, index: KeywordIndex) -> None:
        self.index = index

    async def write(self, namespace: str, document: str, ids: list[str]) -> None:
        records = [
            KeywordRecord(
                id=i, text=f"tea leaf {namespace} {document}", metadata=tag(namespace, document)
            )
            for i in ids
        ]
        await self.index.upsert(records, namespace)

    async def delete_document(self, namespace: str, document: str, ids: list[str]) -> None:
        await self.index.delete(namespace=namespace, ids=ids)

    async def delete_namespace(self, namespace: str) -> None:
        await self.index.delete(namespace=namespace, delete_all=True)

    async def answers(self, namespace: str, model: Model) -> None:
        held = model.held(namespace)
        found = await self.index.query("tea leaf", top_k=50, namespace=namespace)
        assert {match.id for match in found} == held
        for document in DOCUMENTS:
            only = await self.index.query(
                "tea leaf",
                top_k=50,
                namespace=namespace,
                filter={"ns": namespace, "document": document},
            )
            assert {match.id for match in only} == model.chunks(namespace, document)
        assert {i async for page in self.index.list_ids(namespace) for i in page} == held
        assert await self.index.count(namespace) == len(held)


class ChunkRepositoryDriver:
    def __init__(self, repository: ChunkRepository) -> None:
        self.repository = repository

    async def write(self, namespace: str, document: str, ids: list[str]) -> None:
        chunks = [
            RagChunk(
                chunk_id=i,
                document_id=document,
                namespace=namespace,
                title=document,
                domain="plant_diseases",
                position=position,
                content=f"tea {document}",
                metadata=tag(namespace, document),
            )
            for position, i in enumerate(ids)
        ]
        await self.repository.upsert_many(chunks)

    async def delete_document(self, namespace: str, document: str, ids: list[str]) -> int:
        return await self.repository.delete_document(document, namespace)

    async def delete_namespace(self, namespace: str) -> int:
        return await self.repository.delete_namespace(namespace)

    async def answers(self, namespace: str, model: Model) -> None:
        held = model.held(namespace)
        found = await self.repository.get_many(EVERY_CHUNK, namespace)
        assert set(found) == held
        assert all(chunk.namespace == namespace == chunk.metadata["ns"] for chunk in found.values())
        for document in DOCUMENTS:
            expected = model.chunks(namespace, document)
            assert await self.repository.chunk_ids(document, namespace) == expected
        one = await self.repository.get_by_id("d1#0", namespace)
        assert (one is not None) == ("d1#0" in held)
        listed = [pair async for page in self.repository.list_chunks(namespace) for pair in page]
        assert {chunk for chunk, _ in listed} == held
        assert await self.repository.count(namespace) == len(held)


class DocumentLedgerDriver:
    def __init__(self, ledger: DocumentLedger) -> None:
        self.ledger = ledger

    async def write(self, namespace: str, document: str, ids: list[str]) -> None:
        await self.ledger.claim(namespace, [document], LEASE)
        record = DocumentRecord(
            namespace=namespace,
            document_id=document,
            state=DocumentState.COMMITTED,
            fingerprint=f"{namespace}/{document}",
            chunk_ids=tuple(ids),
        )
        await self.ledger.save([record], LEASE)
        await self.ledger.release(namespace, [document], LEASE)

    async def delete_document(self, namespace: str, document: str, ids: list[str]) -> None:
        """The ledger forgets a document as the service does: a record that holds nothing."""
        claim = await self.ledger.claim(namespace, [document], LEASE)
        retired = claim.records[document].retire(set(ids))
        await self.ledger.save([retired.cleaned()], LEASE)
        await self.ledger.release(namespace, [document], LEASE)

    async def delete_namespace(self, namespace: str) -> int:
        return await self.ledger.delete_namespace(namespace)

    async def answers(self, namespace: str, model: Model) -> None:
        found = await self.ledger.get_many(namespace, list(DOCUMENTS))
        assert set(found) == model.documents(namespace)
        for document, record in found.items():
            assert record.namespace == namespace
            assert record.fingerprint == f"{namespace}/{document}"
            assert set(record.chunk_ids) == set(model.namespaces[namespace][document])
        listed = [record async for page in self.ledger.list_records(namespace) for record in page]
        assert {record.document_id for record in listed} == model.documents(namespace)
        assert all(record.namespace == namespace for record in listed)


async def run(driver: Driver, steps: list[Step]) -> None:
    """Apply the steps to the store and to the model, checking every namespace after each."""
    prefix = f"iso-{uuid.uuid4().hex[:8]}"
    model = Model()
    for step in steps:
        namespace = f"{prefix}-{step[1]}"
        held = model.namespaces.setdefault(namespace, {})
        if step[0] == "write":
            for document in step[2]:
                ids = chunk_ids(document, step[3])
                stale = [i for i in held.get(document, []) if i not in ids]
                if stale:
                    await driver.delete_document(namespace, document, stale)
                await driver.write(namespace, document, ids)
                held[document] = ids
        elif step[0] == "delete_document":
            ids = held.pop(step[2], [])
            removed = await driver.delete_document(namespace, step[2], ids)
            assert removed in (None, len(ids))
        else:
            removed = await driver.delete_namespace(namespace)
            expected = (
                sum(map(len, held.values()))
                if isinstance(driver, ChunkRepositoryDriver)
                else len(held)
            )
            assert removed in (None, expected)
            held.clear()
        for name in NAMES:
            await driver.answers(f"{prefix}-{name}", model)


@pytest.fixture
def pinecone() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=4) as running:
        yield running


@pytest.fixture
def pinecone_sparse() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(vector_type="sparse") as running:
        yield running


@pytest.fixture(params=["in-memory", "exact-on-disk", "pinecone"])
async def vector_index(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[VectorIndex]:
    if request.param == "in-memory":
        yield InMemoryVectorIndex()
        return
    index: EmbeddedVectorIndex | PineconeVectorIndex = (
        EmbeddedVectorIndex(tmp_path / "index")
        if request.param == "exact-on-disk"
        else PineconeVectorIndex(request.getfixturevalue("pinecone").connection(), PineconeLsns())
    )
    yield index
    await index.close()


@pytest.fixture(params=["in-memory", "bm25-on-disk", "pinecone-sparse"])
async def keyword_index(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[KeywordIndex]:
    if request.param == "in-memory":
        yield InMemoryKeywordIndex()
        return
    index: Bm25KeywordIndex | PineconeSparseKeywordIndex = (
        Bm25KeywordIndex(tmp_path / "keywords")
        if request.param == "bm25-on-disk"
        else PineconeSparseKeywordIndex(
            request.getfixturevalue("pinecone_sparse").connection(),
            PineconeLsns(SPARSE),
            embed_batch_size=8,
        )
    )
    yield index
    await index.close()


@pytest.fixture(params=["in-memory", "mongodb"])
def chunk_repository(request: pytest.FixtureRequest) -> ChunkRepository:
    if request.param == "in-memory":
        return InMemoryChunkRepository()
    repository: MongoChunkRepository = request.getfixturevalue("mongo_repository")
    return repository


@pytest.fixture(params=["in-memory", "mongodb"])
def document_ledger(request: pytest.FixtureRequest) -> DocumentLedger:
    if request.param == "in-memory":
        return InMemoryDocumentLedger()
    ledger: MongoDocumentLedger = request.getfixturevalue("mongo_ledger")
    return ledger


@pytest.fixture(params=["in-memory", "mongodb"])
def generations(request: pytest.FixtureRequest) -> NamespaceGenerations:
    if request.param == "in-memory":
        return InMemoryNamespaceGenerations()
    client: AsyncMongoClient = request.getfixturevalue("mongo_client")
    return MongoNamespaceGenerations(client[f"test_{uuid.uuid4().hex[:12]}"]["generations"])


@FEW
@given(steps=STEPS)
async def test_vector_indexes_keep_namespaces_apart(vector_index: VectorIndex, steps) -> None:
    await run(VectorIndexDriver(vector_index), steps)


@FEW
@given(steps=STEPS)
async def test_keyword_indexes_keep_namespaces_apart(keyword_index: KeywordIndex, steps) -> None:
    await run(KeywordIndexDriver(keyword_index), steps)


@FEW
@given(steps=STEPS)
async def test_chunk_repositories_keep_namespaces_apart(
    chunk_repository: ChunkRepository, steps
) -> None:
    await run(ChunkRepositoryDriver(chunk_repository), steps)


@FEW
@given(steps=STEPS)
async def test_document_ledgers_keep_namespaces_apart(
    document_ledger: DocumentLedger, steps
) -> None:
    await run(DocumentLedgerDriver(document_ledger), steps)


@FEW
@given(advanced=st.lists(st.sampled_from(NAMES), max_size=8))
async def test_generations_advance_one_namespace_at_a_time(
    generations: NamespaceGenerations, advanced: list[str]
) -> None:
    prefix = f"iso-{uuid.uuid4().hex[:8]}"
    for done, name in enumerate(advanced, start=1):
        await generations.advance(f"{prefix}-{name}")
        for other in NAMES:
            assert (await generations.current(f"{prefix}-{other}")).number == advanced[:done].count(
                other
            )

"""Chunk texts in MongoDB through PyMongo's async API (an injected Motor collection also works).

Reads ask for every id in one ``find``, or, given ``read_batch``, in consecutive finds of at
most that many ids each (``retrieval.adapters.mongo.embedded_server.READ_BATCH`` says why the
embedded server wants them). Documents come back whole: the fields of a chunk are picked
here, which costs the client less than a projection costs that server.

Big writes go in batches of at most ``write_batch`` chunks, each one bulk write. Every
batch, read or written, runs under its own deadline (``pymongo.timeout(bulk_timeout_ms)``,
which replaces the client's ``timeoutMS`` for that batch), so the size of a write never
decides whether it times out. Deleting a document or a namespace finds a batch of ``_id``
values and deletes them, until a find comes back empty: stopped at any point, by a crash or
a timeout, it is simply run again. Deletes are single-document statements, which MongoDB
retries after a network error (``delete_many`` is not retryable). Listing reads a batch at a
time, after the last ``chunk_id`` of the batch before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pymongo
from bson.errors import InvalidDocument
from pymongo import ASCENDING, DeleteOne, ReplaceOne
from pymongo.errors import (
    AutoReconnect,
    ConnectionFailure,
    ExecutionTimeout,
    NetworkTimeout,
    OperationFailure,
    PyMongoError,
    ServerSelectionTimeoutError,
    WTimeoutError,
)

from retrieval.batching import slices
from retrieval.domain.models import RagChunk
from retrieval.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    InvalidRequestError,
    NotAuthorisedError,
)

AUTH_ERROR_CODES = frozenset({13, 18})
LISTING = {"_id": False, "chunk_id": True, "document_id": True}


@contextmanager
def mongo_errors(operation: str) -> Iterator[None]:
    """Translate PyMongo's errors into the service's (PyMongo already retries once); a
    document BSON cannot encode (validation should have refused it) is bad input."""
    try:
        yield
    except InvalidDocument as error:
        raise InvalidRequestError(f"MongoDB cannot store it ({operation}): {error}") from error
    except (NetworkTimeout, ExecutionTimeout, WTimeoutError) as error:
        raise BackendTimeoutError(f"MongoDB {operation} timed out: {error}") from error
    except (ServerSelectionTimeoutError, AutoReconnect, ConnectionFailure) as error:
        raise BackendUnavailableError(f"MongoDB unreachable during {operation}: {error}") from error
    except OperationFailure as error:
        if error.code in AUTH_ERROR_CODES:
            raise NotAuthorisedError(f"MongoDB refused {operation}: {error}") from error
        raise BackendError(f"MongoDB {operation} failed: {error}") from error
    except PyMongoError as error:
        raise BackendError(f"MongoDB {operation} failed: {error}") from error


@contextmanager
def round_trip(operation: str, seconds: float) -> Iterator[None]:
    """One read or write under its own deadline instead of the client's, errors translated."""
    with mongo_errors(operation), pymongo.timeout(seconds):
        yield


async def delete_in_pages(collection: Any, query: dict[str, Any], page: int) -> int:
    """Delete what ``query`` matches ``page`` documents at a time, found by id then deleted by
    id, so that each request stays short however many match (one ``delete_many`` over a large
    namespace outlasts the client's deadline on a busy embedded server), and an interrupted
    deletion is finished by running it again; returns how many were deleted."""
    deleted = 0
    while True:
        with mongo_errors("delete"):
            found = await collection.find(query, {"_id": True}).limit(page).to_list(None)
            if not found:
                return deleted
            keys = [document["_id"] for document in found]
            result = await collection.delete_many({"_id": {"$in": keys}})
        deleted += result.deleted_count


async def create_namespace_index(collection: Any, field: str, *, unique: bool = False) -> None:
    """The index on ``(namespace, field)``, named ``namespace_<field>``."""
    await collection.create_index(
        [("namespace", ASCENDING), (field, ASCENDING)], unique=unique, name=f"namespace_{field}"
    )


def to_document(chunk: RagChunk) -> dict[str, Any]:
    return chunk.model_dump()


def to_chunk(document: dict[str, Any]) -> RagChunk:
    """The chunk a stored document holds, its ``_id`` (and any field a chunk lacks) left out."""
    return RagChunk.model_validate(
        {field: document[field] for field in RagChunk.model_fields if field in document}
    )


class MongoChunkRepository:
    """Stores one MongoDB document per chunk, unique on ``(namespace, chunk_id)``;
    ``read_batch``: most ids one find of ``get_many`` asks for (None: all of them)."""

    def __init__(
        self,
        collection: Any,
        *,
        write_batch: int = 500,
        read_batch: int | None = None,
        bulk_timeout_ms: int = 60_000,
    ) -> None:
        if write_batch < 1:
            raise ValueError("write_batch must be at least 1")
        if read_batch is not None and read_batch < 1:
            raise ValueError("read_batch must be at least 1")
        if bulk_timeout_ms < 1:
            raise ValueError("bulk_timeout_ms must be at least 1")
        self._collection = collection
        self._write_batch = write_batch
        self._read_batch = read_batch
        self._bulk_timeout = bulk_timeout_ms / 1000

    async def ensure_indexes(self) -> None:
        with mongo_errors("create_index"):
            await create_namespace_index(self._collection, "chunk_id", unique=True)
            await create_namespace_index(self._collection, "document_id")

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        for batch in slices(chunks, self._write_batch):
            operations = [
                ReplaceOne(
                    {"namespace": chunk.namespace, "chunk_id": chunk.chunk_id},
                    to_document(chunk),
                    upsert=True,
                )
                for chunk in batch
            ]
            with self._batch("upsert"):
                await self._collection.bulk_write(operations, ordered=False)
        return len(chunks)

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        found: dict[str, RagChunk] = {}
        for batch in slices(chunk_ids, self._read_size(len(chunk_ids))):
            query = {"namespace": namespace, "chunk_id": {"$in": list(batch)}}
            with mongo_errors("find"):
                documents = await self._collection.find(query).to_list(None)
            found.update((document["chunk_id"], to_chunk(document)) for document in documents)
        return found

    async def get_by_id(self, chunk_id: str, namespace: str) -> RagChunk | None:
        with mongo_errors("find_one"):
            document = await self._collection.find_one(
                {"namespace": namespace, "chunk_id": chunk_id}
            )
        return None if document is None else to_chunk(document)

    async def chunk_ids(self, document_id: str, namespace: str) -> set[str]:
        query = {"namespace": namespace, "document_id": document_id}
        with mongo_errors("find"):
            found = await self._collection.find(query, {"_id": False, "chunk_id": True}).to_list(
                None
            )
        return {document["chunk_id"] for document in found}

    async def delete_chunks(self, chunk_ids: Sequence[str], namespace: str) -> int:
        return await self._delete_each(
            [{"namespace": namespace, "chunk_id": chunk_id} for chunk_id in set(chunk_ids)]
        )

    async def delete_document(self, document_id: str, namespace: str) -> int:
        return await self._delete_matching({"namespace": namespace, "document_id": document_id})

    async def delete_namespace(self, namespace: str) -> int:
        return await self._delete_matching({"namespace": namespace})

    async def count(self, namespace: str | None = None) -> int:
        with mongo_errors("count"):
            return await self._collection.count_documents(
                {} if namespace is None else {"namespace": namespace}
            )

    async def list_chunks(self, namespace: str) -> AsyncIterator[list[tuple[str, str]]]:
        query: dict[str, Any] = {"namespace": namespace}
        while True:
            with self._batch("list"):
                found = (
                    await self._page(self._collection.find(query, LISTING))
                    .sort("chunk_id", ASCENDING)
                    .to_list(None)
                )
            if found:
                yield [(document["chunk_id"], document["document_id"]) for document in found]
            if len(found) < self._write_batch:
                return
            query["chunk_id"] = {"$gt": found[-1]["chunk_id"]}

    async def _delete_matching(self, query: dict[str, Any]) -> int:
        deleted = 0
        while True:
            with self._batch("find"):
                found = await self._page(self._collection.find(query, {"_id": True})).to_list(None)
            if not found:
                return deleted
            deleted += await self._delete_each([{"_id": document["_id"]} for document in found])

    async def _delete_each(self, selectors: Sequence[dict[str, Any]]) -> int:
        deleted = 0
        for batch in slices(selectors, self._write_batch):
            with self._batch("delete"):
                result = await self._collection.bulk_write(
                    [DeleteOne(selector) for selector in batch], ordered=False
                )
            deleted += result.deleted_count
        return deleted

    def _read_size(self, count: int) -> int:
        """Ids per find for ``count`` ids: the fewest finds ``read_batch`` allows, of even size."""
        if self._read_batch is None or count <= self._read_batch:
            return max(count, 1)
        finds = -(-count // self._read_batch)
        return -(-count // finds)

    def _page(self, cursor: Any) -> Any:
        """At most one batch of documents, in one round trip."""
        return cursor.limit(self._write_batch).batch_size(self._write_batch)

    def _batch(self, operation: str) -> AbstractContextManager[None]:
        return round_trip(operation, self._bulk_timeout)

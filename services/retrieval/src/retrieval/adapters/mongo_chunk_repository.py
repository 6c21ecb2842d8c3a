"""Chunk texts in MongoDB through PyMongo's async API (an injected Motor collection also works)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from pymongo import ASCENDING, ReplaceOne
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

from retrieval.domain.models import RagChunk
from retrieval.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    NotAuthorisedError,
)

AUTH_ERROR_CODES = frozenset({13, 18})
CHUNK_FIELDS = ("chunk_id", "document_id", "namespace", "title", "domain", "position", "content")
PROJECTION = {"_id": False, **dict.fromkeys(CHUNK_FIELDS, True), "metadata": True}


@contextmanager
def mongo_errors(operation: str) -> Iterator[None]:
    """Translate PyMongo's errors into the service's (PyMongo already retries once)."""
    try:
        yield
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


def to_document(chunk: RagChunk) -> dict[str, Any]:
    return chunk.model_dump()


def to_chunk(document: dict[str, Any]) -> RagChunk:
    return RagChunk.model_validate(document)


class MongoChunkRepository:
    """Stores one MongoDB document per chunk, unique on ``(namespace, chunk_id)``."""

    def __init__(self, collection: Any) -> None:
        self._collection = collection

    async def ensure_indexes(self) -> None:
        with mongo_errors("create_index"):
            await self._collection.create_index(
                [("namespace", ASCENDING), ("chunk_id", ASCENDING)],
                unique=True,
                name="namespace_chunk_id",
            )
            await self._collection.create_index(
                [("namespace", ASCENDING), ("document_id", ASCENDING)],
                name="namespace_document_id",
            )

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        if not chunks:
            return 0
        operations = [
            ReplaceOne(
                {"namespace": chunk.namespace, "chunk_id": chunk.chunk_id},
                to_document(chunk),
                upsert=True,
            )
            for chunk in chunks
        ]
        with mongo_errors("upsert"):
            await self._collection.bulk_write(operations, ordered=False)
        return len(chunks)

    async def get_many(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        if not chunk_ids:
            return {}
        query = {"namespace": namespace, "chunk_id": {"$in": list(chunk_ids)}}
        with mongo_errors("find"):
            found = await self._collection.find(query, PROJECTION).to_list(None)
        return {document["chunk_id"]: to_chunk(document) for document in found}

    async def get_by_id(self, chunk_id: str, namespace: str) -> RagChunk | None:
        with mongo_errors("find_one"):
            document = await self._collection.find_one(
                {"namespace": namespace, "chunk_id": chunk_id}, PROJECTION
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
        if not chunk_ids:
            return 0
        return await self._delete({"namespace": namespace, "chunk_id": {"$in": list(chunk_ids)}})

    async def delete_document(self, document_id: str, namespace: str) -> int:
        return await self._delete({"namespace": namespace, "document_id": document_id})

    async def delete_namespace(self, namespace: str) -> int:
        return await self._delete({"namespace": namespace})

    async def count(self, namespace: str | None = None) -> int:
        with mongo_errors("count"):
            return await self._collection.count_documents(
                {} if namespace is None else {"namespace": namespace}
            )

    async def _delete(self, query: dict[str, Any]) -> int:
        with mongo_errors("delete"):
            result = await self._collection.delete_many(query)
        return result.deleted_count

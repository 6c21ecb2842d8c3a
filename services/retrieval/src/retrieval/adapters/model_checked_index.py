"""Any VectorIndex, refusing to mix embedding models within a namespace.

Every record written carries the model and dimension that made it, as the metadata field
``embedding_model`` (``"<model>@<dimension>"``); the field is removed again from what
queries and fetches return. So the record is in the index itself, works the same on every
backend, and is seen by every process sharing the index.

- Writing: one probe query (``embedding_model`` exists and differs, ``top_k=1``) before
  the upsert; a hit raises ``EmbeddingModelMismatchError`` and nothing is written.
- Querying: costs nothing extra; a match written by another model raises
  ``EmbeddingModelMismatchError`` instead of returning meaningless scores. The check reads
  every match's metadata, so the wrapped index is asked for it even when the caller is not;
  what the caller gets is a copy.
- Fetching: likewise, a record written by another model raises
  ``EmbeddingModelMismatchError`` instead of returning a vector of another model.
- A vector of another dimension than the embedder's, or an index of another dimension,
  raises ``EmbeddingModelMismatchError`` too.

Records written before this field existed carry no model and are accepted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence

from retrieval.domain.metadata import MODEL_FIELD, Metadata, copied, model_signature
from retrieval.domain.vectors import (
    NO_METADATA,
    IndexStats,
    QueryMatch,
    VectorRecord,
    check_finite,
)
from retrieval.errors import (
    EmbeddingModelMismatchError,
    InvalidFilterError,
    InvalidRequestError,
    NamespaceNotFoundError,
)
from retrieval.ports.vector_index import MetadataFilter, VectorIndex


class ModelCheckedIndex:
    def __init__(self, index: VectorIndex, *, model: str, dimension: int) -> None:
        self._index = index
        self._model = model
        self._dimension = dimension
        self._signature = model_signature(model, dimension)

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        if not records:
            return 0
        for record in records:
            if len(record.values) != self._dimension:
                raise EmbeddingModelMismatchError(
                    f"a vector of dimension {len(record.values)} from {self._model}, "
                    f"which makes {self._dimension}",
                    field="values",
                )
            check_finite(record.values, field="values", owner=record.id)
            if MODEL_FIELD in record.metadata:
                raise InvalidRequestError(
                    f"metadata key {MODEL_FIELD!r} is reserved", field="metadata"
                )
        await self._check_writer(namespace, records[0].values)
        stamped = [
            record.model_copy(
                update={"metadata": {**record.metadata, MODEL_FIELD: self._signature}}
            )
            for record in records
        ]
        try:
            return await self._index.upsert(stamped, namespace)
        except InvalidRequestError as error:
            await self._raise_if_index_dimension_differs(error)
            raise

    async def query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
        include_values: bool = False,
        include_metadata: bool = True,
    ) -> list[QueryMatch]:
        found = await self._checked_query(
            vector, top_k=top_k, namespace=namespace, filter=filter, include_values=include_values
        )
        new = tuple.__new__  # a third of the cost of QueryMatch._make
        if include_metadata:
            return [
                new(QueryMatch, (id_, score, values, without_signature(metadata)))
                for id_, score, values, metadata in found
            ]
        return [
            new(QueryMatch, (id_, score, values, NO_METADATA)) for id_, score, values, _ in found
        ]

    async def fetch(self, ids: Sequence[str], namespace: str) -> dict[str, VectorRecord]:
        found = await self._index.fetch(ids, namespace)
        self._check_signatures((record.metadata for record in found.values()), namespace)
        return {
            record_id: record.model_copy(update={"metadata": without_signature(record.metadata)})
            for record_id, record in found.items()
        }

    async def delete(
        self,
        *,
        namespace: str,
        ids: Sequence[str] | None = None,
        filter: MetadataFilter | None = None,
        delete_all: bool = False,
    ) -> None:
        await self._index.delete(namespace=namespace, ids=ids, filter=filter, delete_all=delete_all)

    async def stats(self) -> IndexStats:
        return await self._index.stats()

    def list_ids(self, namespace: str, *, prefix: str | None = None) -> AsyncIterator[list[str]]:
        return self._index.list_ids(namespace, prefix=prefix)

    async def _check_writer(self, namespace: str, probe: Sequence[float]) -> None:
        try:
            await self._checked_query(
                probe,
                top_k=1,
                namespace=namespace,
                filter={MODEL_FIELD: {"$exists": True, "$ne": self._signature}},
            )
        except NamespaceNotFoundError:
            return

    async def _checked_query(
        self,
        vector: Sequence[float],
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None,
        include_values: bool = False,
    ) -> list[QueryMatch]:
        try:
            found = await self._index.query(
                vector,
                top_k=top_k,
                namespace=namespace,
                filter=filter,
                include_values=include_values,
            )
        except InvalidRequestError as error:
            await self._raise_if_index_dimension_differs(error)
            raise
        self._check_signatures((match.metadata for match in found), namespace)
        return found

    def _check_signatures(self, written: Iterable[Mapping[str, object]], namespace: str) -> None:
        """Raises unless every record ``written`` carries this model's signature or none (a
        record written before signatures existed)."""
        foreign = {metadata.get(MODEL_FIELD) for metadata in written} - {None, self._signature}
        if foreign:
            raise EmbeddingModelMismatchError(
                f"namespace {namespace!r} was written by {min(map(str, foreign))}; "
                f"this embedder is {self._signature}",
                field="namespace",
            )

    async def _raise_if_index_dimension_differs(self, error: InvalidRequestError) -> None:
        if isinstance(error, InvalidFilterError | EmbeddingModelMismatchError):
            return
        dimension = (await self._index.stats()).dimension
        if dimension is not None and dimension != self._dimension:
            raise EmbeddingModelMismatchError(
                f"the index holds vectors of dimension {dimension}; "
                f"{self._model} makes {self._dimension}",
                field="values",
            ) from error


def without_signature(metadata: Metadata) -> Metadata:
    """A copy of ``metadata`` without the model's signature, sharing nothing with it."""
    stripped = copied(metadata)
    stripped.pop(MODEL_FIELD, None)
    return stripped

"""Pinecone's documented request limits, enforced before anything is sent.

- upsert: at most 1000 records and 2 MB of JSON per request (2 MB read as 2,000,000
  bytes, the stricter reading); metadata at most 40 KB per record; ids 1-512 ASCII
  characters without NUL; dense values finite and not all zero;
- delete and fetch: at most 1000 ids per request;
- query: ``top_k`` at most 1000 when metadata or values are returned (10,000 otherwise).

Sizes are measured with ``json.dumps`` without spaces on each record as the SDK sends it
(``as_sent``), which never writes a number shorter than the SDK's orjson does, so a request
measured under the limit is under it on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from retrieval.domain.metadata import MAX_METADATA_BYTES, json_size
from retrieval.domain.vectors import MAX_RECORD_ID_CHARS, VectorRecord, check_finite
from retrieval.errors import InvalidRequestError

T = TypeVar("T")

MAX_UPSERT_RECORDS = 1000
MAX_REQUEST_BYTES = 2_000_000
MAX_IDS_PER_REQUEST = 1000
MAX_TOP_K_WITH_METADATA = 1000
MAX_TOP_K = 10_000


def check_id(record_id: str) -> None:
    if not 1 <= len(record_id) <= MAX_RECORD_ID_CHARS:
        raise InvalidRequestError(
            f"ids are 1-{MAX_RECORD_ID_CHARS} characters, got {len(record_id)}", field="id"
        )
    if not record_id.isascii() or "\x00" in record_id:
        raise InvalidRequestError(f"id {record_id[:40]!r} is not ASCII without NUL", field="id")


def wire_record(record: VectorRecord) -> dict[str, Any]:
    """The record as the upsert request carries it, after checking it against the limits."""
    check_id(record.id)
    check_finite(record.values, field="values", owner=record.id)
    if not any(record.values):
        raise InvalidRequestError(f"record {record.id!r} is an all-zero vector", field="values")
    return with_metadata({"id": record.id, "values": list(record.values)}, record.metadata)


def with_metadata(wire: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``wire`` with the record's metadata, if any, after checking its size."""
    if json_size(dict(metadata)) > MAX_METADATA_BYTES:
        raise InvalidRequestError(
            f"metadata of {wire['id']!r} exceeds {MAX_METADATA_BYTES} bytes", field="metadata"
        )
    return {**wire, "metadata": dict(metadata)} if metadata else wire


def as_sent(wire: dict[str, Any]) -> dict[str, Any]:
    """A record dict as the SDK puts it in the request: dense ``values`` always (empty for a
    sparse-only record), ``sparse_values`` renamed ``sparseValues``."""
    sent: dict[str, Any] = {"id": wire["id"], "values": wire.get("values", [])}
    if "sparse_values" in wire:
        sent["sparseValues"] = wire["sparse_values"]
    if "metadata" in wire:
        sent["metadata"] = wire["metadata"]
    return sent


def upsert_batches(records: Sequence[VectorRecord], namespace: str) -> list[list[dict[str, Any]]]:
    """Records packed in order into requests within the count and size limits.

    Raises ``InvalidRequestError`` for any record over a limit, or of another dimension
    than the first, before a single request is built.
    """
    dimensions = {len(record.values) for record in records}
    if len(dimensions) > 1:
        raise InvalidRequestError(
            f"one upsert mixes vectors of dimensions {sorted(dimensions)}", field="values"
        )
    return pack_requests([wire_record(record) for record in records], namespace)


def pack_requests(wires: Sequence[dict[str, Any]], namespace: str) -> list[list[dict[str, Any]]]:
    """Record dicts (as the SDK's ``upsert`` takes them) packed in order into requests within
    the count and size limits; ``InvalidRequestError`` if one alone is over the size limit."""
    envelope = json_size({"vectors": [], "namespace": namespace})
    sizes = [json_size(as_sent(wire)) + 1 for wire in wires]
    for wire, record_size in zip(wires, sizes, strict=True):
        if envelope + record_size > MAX_REQUEST_BYTES:
            raise InvalidRequestError(
                f"record {wire['id']!r} alone exceeds {MAX_REQUEST_BYTES} bytes", field="values"
            )
    return packed(wires, sizes, envelope=envelope, most=MAX_UPSERT_RECORDS, room=MAX_REQUEST_BYTES)


def packed(
    items: Sequence[T], sizes: Sequence[int], *, envelope: int, most: int, room: int
) -> list[list[T]]:
    """``items`` in order, in requests of at most ``most`` whose ``envelope`` and items'
    ``sizes`` add up to at most ``room`` (an item alone may be over it)."""
    batches: list[list[T]] = []
    batch: list[T] = []
    size = envelope
    for item, item_size in zip(items, sizes, strict=True):
        if batch and (len(batch) == most or size + item_size > room):
            batches.append(batch)
            batch, size = [], envelope
        batch.append(item)
        size += item_size
    if batch:
        batches.append(batch)
    return batches

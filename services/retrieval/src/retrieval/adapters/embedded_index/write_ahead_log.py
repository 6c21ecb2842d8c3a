"""The write-ahead log of one namespace of the embedded vector index.

A log is a file of records, each one write: ``magic, payload length, CRC-32`` (12 bytes,
little-endian) then the payload: a kind byte, the length of a JSON header, the JSON header and,
for an upsert, the unit vectors as raw float32. A write appends one record and syncs the file
before it is applied in memory, so its cost is the size of the batch, whatever the size of
the namespace.

Only the end of a log can be torn: a crash in the middle of an append leaves a short or
garbled last record, which ``read_log`` ignores (the write was never acknowledged) and the
writer cuts off before appending again. A log that failed to append refuses every later
append (``BackendError``) until the index is opened again.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from retrieval.errors import BackendError

Matrix = npt.NDArray[np.float32]
MAGIC = b"VLG1"
FRAME = struct.Struct("<4sII")
KIND = struct.Struct("<BI")
UPSERT, DELETE, CLEAR = 1, 2, 3

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Upserted:
    ids: tuple[str, ...]
    vectors: Matrix
    metadata: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Deleted:
    ids: tuple[str, ...]


@dataclass(frozen=True)
class Cleared:
    """Every record of the namespace deleted."""


Operation = Upserted | Deleted | Cleared


def encode(operation: Operation) -> bytes:
    """One framed log record."""
    vectors = b""
    if isinstance(operation, Upserted):
        kind, header = UPSERT, {"ids": operation.ids, "metadata": operation.metadata}
        vectors = np.ascontiguousarray(operation.vectors, dtype="<f4").tobytes()
    elif isinstance(operation, Deleted):
        kind, header = DELETE, {"ids": operation.ids}
    else:
        kind, header = CLEAR, {}
    encoded = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    payload = KIND.pack(kind, len(encoded)) + encoded + vectors
    return FRAME.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


def decode(payload: memoryview) -> Operation:
    kind, length = KIND.unpack_from(payload)
    start = KIND.size + length
    header = json.loads(bytes(payload[KIND.size : start]))
    if kind == CLEAR:
        return Cleared()
    ids = tuple(header["ids"])
    if kind == DELETE:
        return Deleted(ids)
    values = np.frombuffer(payload[start:], dtype="<f4").astype(np.float32)
    return Upserted(ids, values.reshape(len(ids), -1), tuple(header["metadata"]))


def read_log(path: Path) -> tuple[list[Operation], int]:
    """The operations of a log in order, and how many of its bytes hold them; a torn or
    corrupt record ends the log (what follows it is ignored)."""
    data = memoryview(path.read_bytes())
    operations: list[Operation] = []
    offset = 0
    while offset + FRAME.size <= len(data):
        magic, length, checksum = FRAME.unpack_from(data, offset)
        payload = data[offset + FRAME.size : offset + FRAME.size + length]
        if magic != MAGIC or len(payload) != length or zlib.crc32(payload) != checksum:
            break
        operations.append(decode(payload))
        offset += FRAME.size + length
    if offset != len(data):
        log.warning("index_log_tail_ignored", path=str(path), ignored_bytes=len(data) - offset)
    return operations, offset


class LogFile:
    """Appends records to a log, each synced before ``append`` returns.

    ``length``: the bytes of whole records; anything past it (a torn tail) is cut off when
    the file is opened.
    """

    def __init__(self, path: Path, length: int = 0) -> None:
        self.path = path
        self._descriptor = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.ftruncate(self._descriptor, length)
        self.length = length
        self._failed = False

    def append(self, record: bytes) -> None:
        if self._failed:
            raise BackendError(f"the index log {self.path} failed earlier; reopen the index")
        try:
            written = 0
            while written < len(record):
                written += os.pwrite(self._descriptor, record[written:], self.length + written)
            os.fsync(self._descriptor)
        except OSError as exc:
            self._failed = True
            log.error("index_log_append_failed", path=str(self.path), error=str(exc))
            raise BackendError(f"could not append to the index log {self.path}: {exc}") from exc
        self.length += len(record)

    def close(self) -> None:
        os.close(self._descriptor)

"""A backup file over gRPC (``BackupNamespace``, ``RestoreNamespace``): the file in parts of
``PART_BYTES``, and the reports in their messages. Files are read and written off the loop.
A server keeps the file it sends or receives in a scratch directory of its data directory,
for the call only."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

from retrieval.errors import InvalidRequestError
from retrieval.grpc.interceptors import Undecodable
from retrieval.grpc.proto_values import plain_fields
from retrieval.service.backup.backups import BackupReport, RestoreReport
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

PART_BYTES = 1 << 20
"""Bytes per message: well under any message size limit a server may set."""


@contextmanager
def scratch_file(directory: Path, name: str) -> Iterator[Path]:
    """A path in a new directory under ``directory``, removed with what it holds on leaving."""
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="transfer-", dir=directory) as scratch:
        yield Path(scratch) / name


async def file_parts(path: Path) -> AsyncIterator[bytes]:
    """The file's bytes, ``PART_BYTES`` at a time."""
    with path.open("rb") as file:
        while part := await asyncio.to_thread(file.read, PART_BYTES):
            yield part


async def received_file(
    requests: AsyncIterator[pb.RestoreNamespaceRequest | Undecodable], path: Path
) -> pb.RestoreNamespaceRequest | None:
    """Writes the bytes of every message to ``path``; the first message, None if none came."""
    first = None
    with path.open("wb") as file:
        async for message in requests:
            if isinstance(message, Undecodable):
                raise InvalidRequestError(f"a message does not decode: {message.error}")
            first = first or message
            await asyncio.to_thread(file.write, message.data)
    return first


def backup_summary(report: BackupReport) -> pb.BackupSummary:
    return pb.BackupSummary(**report.model_dump(exclude={"file"}))


def backup_report(summary: pb.BackupSummary, file: Path) -> BackupReport:
    """The report of a backup received into ``file``."""
    return BackupReport(file=str(file), **plain_fields(summary, BackupReport))


def restore_response(report: RestoreReport) -> pb.RestoreNamespaceResponse:
    return pb.RestoreNamespaceResponse(**report.model_dump(exclude={"file"}))


def restore_report(response: pb.RestoreNamespaceResponse, file: Path) -> RestoreReport:
    """The report of a restore of ``file`` sent to a server."""
    return RestoreReport(file=str(file), **plain_fields(response, RestoreReport))


async def restore_requests(
    file: Path, namespace: str, replace: bool
) -> AsyncIterator[pb.RestoreNamespaceRequest]:
    """The messages of a restore of ``file``: where to in the first, the file in all."""
    first = True
    async for part in file_parts(file):
        yield pb.RestoreNamespaceRequest(
            namespace=namespace if first else "", replace=replace and first, data=part
        )
        first = False


def restore_target(first: pb.RestoreNamespaceRequest | None) -> tuple[str, bool]:
    """Where a restore goes and whether it replaces, from its first message."""
    if first is None or not first.namespace:
        raise InvalidRequestError(
            "the first message must name the namespace to restore into", field="namespace"
        )
    return first.namespace, first.replace

"""The gRPC fuzz target calls each method as it is declared: a streamed backup is read to its
end, not taken for one answer and left hanging until the deadline."""

from __future__ import annotations

import pytest

from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_testkit.fuzz.apps import NAMESPACES
from retrieval_testkit.fuzz.grpc_requests import send, served


@pytest.mark.timeout(300)
async def test_a_streamed_backup_is_read_to_its_end_within_the_deadline() -> None:
    backup = pb.BackupNamespaceRequest(namespace=NAMESPACES[0]).SerializeToString()
    async with served() as channel:
        await send(
            channel, {"method": "BackupNamespace", "payload": backup, "correlation_id": None}, 10.0
        )

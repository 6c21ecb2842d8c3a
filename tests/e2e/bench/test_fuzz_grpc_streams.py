"""The gRPC fuzz target calls each method as it is declared: a streamed backup is read to its
end, not taken for one answer and left hanging until the deadline."""

from __future__ import annotations

import pytest

from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_testkit.fuzz.apps import NAMESPACES
from retrieval_testkit.fuzz.grpc_requests import send, served
from retrieval_testkit.fuzz.harness import RefusedError


@pytest.mark.timeout(300)
async def test_a_streamed_backup_is_read_to_its_end_within_the_deadline() -> None:
    backup = pb.BackupNamespaceRequest(namespace=NAMESPACES[0]).SerializeToString()
    async with served() as channel:
        await send(
            channel, {"method": "BackupNamespace", "payload": backup, "correlation_id": None}, 10.0
        )


@pytest.mark.timeout(300)
async def test_a_streamed_restore_message_that_does_not_decode_is_refused() -> None:
    garbage = b"\xd3\xe6M\xb3\xa5\xdf\x0c\xb3\xb3\xb3\xb3\xb3\xb3"
    async with served() as channel:
        with pytest.raises(RefusedError, match="INVALID_ARGUMENT"):
            await send(
                channel,
                {"method": "RestoreNamespace", "payload": garbage, "correlation_id": None},
                10.0,
            )

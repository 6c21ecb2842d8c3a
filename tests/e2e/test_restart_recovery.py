"""``retrieval serve`` killed in the middle of a write: the next start rolls the write back,
so the knowledge base is whole again without ``retrieval reconcile``."""

from __future__ import annotations

import asyncio
import random
import signal
from pathlib import Path

import pytest

from retrieval.domain.chunking import MAX_CHUNK_CHARS
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.grpc import HealthStatus, RetrievalClient
from retrieval_testkit.served_process import serve_environment, served_process
from retrieval_testkit.waiting import until

NAMESPACE = "killed"
CALL_TIMEOUT_S = 300.0


def ideographs(rng: random.Random) -> str:
    """Long chunks no cache knows: their embedding outlasts the test's look at the write."""
    return "\n\n".join(
        "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_CHUNK_CHARS)) for _ in range(24)
    )


@pytest.mark.timeout(600)
async def test_a_write_cut_short_by_sigkill_is_rolled_back_when_the_server_starts_again(
    tmp_path: Path,
) -> None:
    environment = serve_environment(tmp_path / "data")
    async with (
        served_process(tmp_path, environment) as served,
        RetrievalClient.connect(served.address, timeout=CALL_TIMEOUT_S) as client,
    ):
        kept = RagDocument(
            document_id="kept", title="Kept", domain=DEFAULT_DOMAINS[0], content="Frost."
        )
        await client.ingest_documents([kept], namespace=NAMESPACE)
        doomed = RagDocument(
            document_id="cut-short",
            title="Cut short",
            domain=DEFAULT_DOMAINS[0],
            content=ideographs(random.Random(3)),
        )
        write = asyncio.ensure_future(client.ingest_documents([doomed], namespace=NAMESPACE))

        async def pending() -> bool:
            stats = await client.stats()
            return any("pending" in reason for reason in stats.reasons)

        await until(pending, "the write's pending record", every=0.05)
        served.process.send_signal(signal.SIGKILL)
        await served.process.wait()
        write.cancel()

    async with (
        served_process(tmp_path, environment) as restarted,
        RetrievalClient.connect(restarted.address, timeout=CALL_TIMEOUT_S) as client,
    ):
        stored = await client.stats()
        documents = await client.documents(namespace=NAMESPACE)
    assert (stored.status, stored.reasons) == (HealthStatus.GREEN, ())
    assert [document.document_id for document in documents] == ["kept"]
    assert restarted.log.events("reconcile.recovered")[0]["repaired"] == 1

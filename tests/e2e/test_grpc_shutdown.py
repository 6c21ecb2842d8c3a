"""SIGTERM to ``retrieval serve`` in the middle of a burst of the costliest embeddings the
service takes: the process exits within its grace period plus a margin, every call in flight
ends with a status instead of hanging, and the writes it cut short left nothing behind.

The real model on the embedded stack: queries of 500 CJK characters (one full E5 window
each) and writes of documents cut into 1,500-character chunks (three windows each), far
more than the grace period lets the model finish. The writes are sent first, so a batch of
passages (the longest call the model makes, which no thread can interrupt) is running when
the signal comes, and SIGTERM is sent once the server counts every call in flight. Once with
the default batch (4 passages), once with batches of 32, each a model call of a minute or
more: how long the process takes to exit must not depend on how long that call lasts.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from pathlib import Path

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from retrieval.domain.chunking import MAX_CHUNK_CHARS
from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.domain.query_text import QUERY_WINDOW_CHARS
from retrieval.grpc import HealthStatus, RetrievalClient
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc
from retrieval_testkit.served_process import ServedProcess, serve_environment, served_process
from retrieval_testkit.waiting import until

GRACE_S = 5.0
MARGIN_S = 20.0
"""Beyond the grace period: cancelled writes undo what they began, the stores close."""
QUERIES = 48
WRITES = 6
PARAGRAPHS_PER_WRITE = 12
CALL_TIMEOUT_S = 600.0
"""Longer than the test: a call that ends, ends because the server ended it."""
NAMESPACE = "shutdown"
ENDED_BY_SHUTDOWN = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
CJK = (0x4E00, 0x9FFF)


def cjk(rng: random.Random, length: int) -> str:
    """Ideographs drawn at random: no two texts alike, so no cache answers."""
    return "".join(chr(rng.randint(*CJK)) for _ in range(length))


def write_request(n: int, content: str) -> pb.IngestDocumentsRequest:
    document = pb.Document(
        document_id=f"burst-{n}", title=f"Burst {n}", domain=DEFAULT_DOMAINS[0], content=content
    )
    return pb.IngestDocumentsRequest(namespace=NAMESPACE, documents=[document])


async def in_flight(served: ServedProcess, count: int) -> bool:
    """Whether the server counts ``count`` calls in flight (``retrieval_rpc_in_flight``)."""
    async with httpx.AsyncClient() as http:
        scraped = await http.get(f"http://127.0.0.1:{served.metrics_port}/metrics")
    [gauge] = [
        family
        for family in text_string_to_metric_families(scraped.text)
        if family.name == "retrieval_rpc_in_flight"
    ]
    return sum(sample.value for sample in gauge.samples) >= count


async def ending(call: asyncio.Future) -> grpc.StatusCode:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


@pytest.mark.timeout(600)
@pytest.mark.parametrize("batch_size", [None, 32], ids=["default-batch", "batch-of-32"])
async def test_sigterm_during_a_burst_of_maximal_embeddings_exits_within_the_grace_period(
    tmp_path: Path, batch_size: int | None
) -> None:
    rng = random.Random(7)
    batches = {} if batch_size is None else {"RETRIEVAL_EMBED_BATCH_SIZE": str(batch_size)}
    environment = serve_environment(
        tmp_path / "data",
        RETRIEVAL_GRPC_GRACE_SECONDS=f"{GRACE_S:g}",
        RETRIEVAL_METRICS_PORT="0",
        **batches,
    )
    async with (
        served_process(tmp_path, environment) as served,
        grpc.aio.insecure_channel(served.address) as channel,
    ):
        assert served.metrics_port is not None
        stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        seed = write_request(0, "Ground frost scorches the plucking table of tea bushes.")
        seeded = await stub.IngestDocuments(seed, timeout=CALL_TIMEOUT_S)
        assert [outcome.outcome for outcome in seeded.outcomes] == [pb.OUTCOME_CREATED]

        writes = [
            write_request(
                n, "\n\n".join(cjk(rng, MAX_CHUNK_CHARS) for _ in range(PARAGRAPHS_PER_WRITE))
            )
            for n in range(1, WRITES + 1)
        ]
        calls = [
            asyncio.ensure_future(stub.IngestDocuments(write, timeout=CALL_TIMEOUT_S))
            for write in writes
        ]
        await until(lambda: in_flight(served, len(calls)), "the writes in flight", every=0.05)
        queries = [
            pb.RetrieveRequest(query=cjk(rng, QUERY_WINDOW_CHARS), namespace=NAMESPACE)
            for _ in range(QUERIES)
        ]
        calls += [
            asyncio.ensure_future(stub.Retrieve(query, timeout=CALL_TIMEOUT_S)) for query in queries
        ]
        await until(lambda: in_flight(served, len(calls)), "every call in flight", every=0.05)

        signalled = time.monotonic()
        served.process.send_signal(signal.SIGTERM)
        statuses = await asyncio.wait_for(
            asyncio.gather(*(ending(call) for call in calls)), timeout=GRACE_S + MARGIN_S
        )
        calls_ended_s = time.monotonic() - signalled
        try:
            exit_code = await asyncio.wait_for(served.process.wait(), GRACE_S + MARGIN_S)
        except TimeoutError:
            pytest.fail(f"the process was still running {GRACE_S + MARGIN_S:g} s after SIGTERM")
        exited_s = time.monotonic() - signalled
        await asyncio.wait_for(served.log.closed(), timeout=CALL_TIMEOUT_S)
        abandoned = bool(served.log.events("serve.abandoned_work"))

    counts = {code.name: statuses.count(code) for code in set(statuses)}
    print(
        f"\nSIGTERM with {len(calls)} calls in flight (grace {GRACE_S:g} s): calls ended after "
        f"{calls_ended_s:.1f} s, the process exited after {exited_s:.1f} s with code "
        f"{exit_code}{', leaving a model call running' if abandoned else ''}; statuses {counts}"
    )
    assert exit_code == 0
    assert exited_s < GRACE_S + MARGIN_S
    assert set(statuses) <= ENDED_BY_SHUTDOWN | {grpc.StatusCode.OK}, counts
    assert set(statuses) & ENDED_BY_SHUTDOWN, "the burst ended before the grace period did"

    async with (
        served_process(tmp_path, environment) as restarted,
        RetrievalClient.connect(restarted.address, timeout=CALL_TIMEOUT_S) as client,
    ):
        stored = await client.stats()
    assert (stored.status, stored.reasons) == (HealthStatus.GREEN, ())

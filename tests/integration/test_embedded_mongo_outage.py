"""The embedded MongoDB killed under a running application: calls fail at once while it is
down, the supervisor starts it again, and the application carries on without a restart."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.adapters.mongo.namespace_generations import MongoNamespaceGenerations
from retrieval.container import Container
from retrieval.domain.ledger import fingerprint
from retrieval.domain.models import RagDocument
from retrieval.errors import BackendUnavailableError
from retrieval.lifecycle import Application, resolve
from retrieval.ports.embedder import Matrix
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.settings import Settings
from retrieval_bench.crash import mismatches
from retrieval_testkit import HashEmbedder
from retrieval_testkit.embedded_mongo import (
    kill_server,
    on_embedded_mongo,
    pausing_supervisor,
    restarted,
)

NS = "outage"
RESTART_PAUSE_S = 3.0
FAIL_FAST_S = 1.0
"""Sane bound of a call made while the server is down (it waited 10 s, 20 s for a retrieval)."""


FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost scorches the plucking table of tea bushes on still winter nights.",
)
DROUGHT = RagDocument(
    document_id="drought",
    title="Drought",
    domain="weather_patterns",
    content="Long droughts wilt young tea bushes; growers mulch the rows to keep soil moist.",
)


def document(n: int, version: int) -> RagDocument:
    words = " ".join(f"v{version}d{n}w{i}" for i in range(120))
    return RagDocument(
        document_id=f"garden-{n}",
        title=f"Garden {n}",
        domain="tea_cultivation",
        content=f"## Soil\n\n{words}\n\n## Shade\n\n{words} shade",
    )


def corpus(version: int) -> list[RagDocument]:
    return [document(n, version) for n in range(6)]


async def stored(container: Container) -> NamespaceAudit:
    """What the four stores and the ledger hold of the namespace."""
    stores = ChunkStores(
        await resolve(container.vector_index),
        await resolve(container.keyword_index),
        await resolve(container.chunk_repository),
        await resolve(container.chunk_graph),
    )
    return await audit(stores, await resolve(container.document_ledger), NS)


def chunk_ids(app: Application, documents: Sequence[RagDocument]) -> dict[str, set[str]]:
    return {d.document_id: {c.chunk_id for c in app.ingestion.split(d, NS)} for d in documents}


async def test_calls_fail_at_once_while_the_server_is_down_and_work_after_its_restart(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path)
    supervisor = pausing_supervisor(settings, RESTART_PAUSE_S)
    async with on_embedded_mongo(settings, supervisor) as (app, _):
        assert [o.outcome for o in await app.ingestion.ingest([FROST], NS)] == [Outcome.CREATED]
        uri = supervisor.uri

        killed = await kill_server(supervisor)
        assert not Path(f"/proc/{killed}").exists(), "the dead server was not reaped"
        for call in (
            lambda: app.retrieval.retrieve("frost", namespace=NS),
            lambda: app.ingestion.ingest([DROUGHT], NS),
            lambda: app.stats.probe(),
        ):
            started = time.monotonic()
            with pytest.raises(BackendUnavailableError, match="embedded MongoDB exited"):
                await call()
            assert time.monotonic() - started < FAIL_FAST_S
        assert supervisor.pid is None, "the server came back before the calls were made"

        assert await restarted(supervisor) != killed
        assert supervisor.uri == uri
        assert [o.outcome for o in await app.ingestion.ingest([DROUGHT], NS)] == [Outcome.CREATED]
        for query, document_id in (("frost winter nights", "frost"), ("long droughts", "drought")):
            found = await app.retrieval.retrieve(query, namespace=NS)
            assert found.matches[0].document_id == document_id


class KillingEmbedder(HashEmbedder):
    """Kills the embedded server at its ``kill_at``-th passage batch (between a write's
    pending record and its chunks), returning once the supervisor has seen it die."""

    def __init__(self, supervisor: EmbeddedMongoSupervisor) -> None:
        super().__init__()
        self.supervisor = supervisor
        self.batches = 0
        self.kill_at: int | None = None

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        self.batches += 1
        if self.batches == self.kill_at:
            await kill_server(self.supervisor)
        return await super().embed_passages(texts)


async def test_a_server_killed_mid_ingestion_leaves_every_document_whole_in_one_version(
    tmp_path: Path,
) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, ingest_documents_per_write=2)
    supervisor = pausing_supervisor(settings, RESTART_PAUSE_S)
    embedder = KillingEmbedder(supervisor)
    async with on_embedded_mongo(settings, supervisor, embedder) as (app, container):
        await app.ingestion.ingest(corpus(0), NS)
        old, new = chunk_ids(app, corpus(0)), chunk_ids(app, corpus(1))
        assert mismatches(await stored(container), old) == 0

        embedder.kill_at = embedder.batches + 2  # the second pair of documents
        with pytest.raises(BackendUnavailableError):
            await app.ingestion.ingest(corpus(1), NS)
        assert embedder.batches == embedder.kill_at
        await restarted(supervisor)
        interrupted = await stored(container)
        assert interrupted.pending == {"garden-2", "garden-3"}

        await app.repair.reconcile(NS)
        repaired = await stored(container)
        whole = {
            document_id: new[document_id]
            if repaired.records[document_id].is_current(fingerprint(new[document_id]))
            else old[document_id]
            for document_id in old
        }
        assert mismatches(repaired, whole) == 0
        assert {d for d in old if whole[d] == new[d]} == {"garden-0", "garden-1"}

        outcomes = await app.ingestion.ingest(corpus(1), NS)
        assert all(o.outcome is not Outcome.FAILED for o in outcomes)
        assert mismatches(await stored(container), new) == 0


async def test_an_acknowledged_generation_advance_survives_a_kill_of_the_server(
    tmp_path: Path,
) -> None:
    """Advances are journaled (``j``): SecantusDB syncs its journal only when asked."""
    with EmbeddedMongoSupervisor(tmp_path / "mongo") as supervisor:
        client: AsyncMongoClient = AsyncMongoClient(supervisor.uri)
        try:
            generations = MongoNamespaceGenerations(client["retrieval"]["generations"])
            for _ in range(3):
                await generations.advance(NS)
            await kill_server(supervisor)
            await restarted(supervisor)
            assert (await generations.current(NS)).number == 3
        finally:
            await client.close()

"""Kills a real writing process at random instants and checks that re-running converges.

The harness runs a MongoDB wire server (SecantusDB) of its own and a data directory for the
embedded indexes. Each cycle picks a version of a corpus (the bundled knowledge base, twice
over, each document with a source under ``ROOT``, with text and metadata changed and a
quarter of the documents left out, differently, in each version), starts a child process
that syncs the namespace to it (ingesting, then deleting the documents the version leaves
out) or deletes every document under ``COPIES`` by source prefix, and SIGKILLs it at a
random instant, one to four times in a row (each time with another version, so half-written
versions and half-done deletions pile up). Then a last child syncs to a version to its end,
and the four stores and the ledger are compared with the chunks that version's documents
must have: every vector, keyword entry and graph record with its text, every text with all
three, nothing
stale, every record committed, no record of a document the version leaves out. Passage
vectors are cached in MongoDB after the first run, so most of each child's time is spent
writing.

Every third cycle, from the second, kills restores instead: the namespace is backed up at
versions 0 and 1 first, and each killed child restores one of those backups (picked at
random, so half-restored versions pile up) into ``RESTORED`` with ``replace``; a last child
restores one to its end, and ``RESTORED`` is compared with that version's chunks as above.
"""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from secantus import SecantusDBServer

from retrieval.adapters.files.document_files import load_documents
from retrieval.container import Container
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.ledger import fingerprint
from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source
from retrieval.lifecycle import resolve, running, start_resources
from retrieval.service.ingestion.consistency import ChunkStores, NamespaceAudit, audit
from retrieval.service.ingestion.outcomes import Outcome
from retrieval.service.ingestion.requests import SyncRequest
from retrieval.settings import Settings

NAMESPACE = "crash"
RESTORED = "crash-restored"
ROOT = "/crash-corpus"
COPIES = f"{ROOT}/copy"
SYNC, DELETE, BACKUP, RESTORE = "sync", "delete", "backup", "restore"
BACKED_UP = (0, 1)
"""The versions backed up, restored by the restore cycles."""
RESTORE_CYCLES = 3
"""One cycle in this many kills restores."""
READY = "ready"
START_TIMEOUT_S = 120.0
RUN_TIMEOUT_S = 600.0


def corpus(version: int) -> list[RagDocument]:
    """The knowledge base twice over; odd versions change every other document's text and
    every third document's metadata, so each run after the first updates and removes chunks
    (and, after the first two, finds every passage vector in the cache); each version leaves
    out another quarter of the documents."""
    documents = []
    for copy in ("", "-copy"):
        for n, document in enumerate(load_documents([KNOWLEDGE_DIR])):
            if (n + version) % 4 == 0:
                continue
            folder = COPIES if copy else ROOT
            content = document.content
            metadata = dict(document.metadata)
            if version % 2 and n % 2 == 0:
                content = content.replace("\n\n", "\n\nRevised in the second edition.\n\n", 1)
            if version % 2 and n % 3 == 0:
                metadata["edition"] = "second"
            documents.append(
                document.model_copy(
                    update={
                        "document_id": f"{document.document_id}{copy}",
                        "content": content,
                        "metadata": metadata,
                        "source": Source(uri=f"{folder}/{document.document_id}.md"),
                    }
                )
            )
    return documents


@dataclass(frozen=True)
class CrashReport:
    kills: int
    restore_kills: int
    reruns: int
    mismatches: int
    seconds: float

    def as_dict(self) -> dict:
        return {
            "kills": self.kills,
            "restore_kills": self.restore_kills,
            "reruns": self.reruns,
            "mismatches": self.mismatches,
            "seconds": round(self.seconds, 1),
        }


class Harness:
    def __init__(self, workdir: Path, mongo_uri: str, rng: random.Random) -> None:
        self._data = workdir / "data"
        self._backups = workdir / "backups"
        self._backups.mkdir()
        self._rng = rng
        self._env = {
            **os.environ,
            "RETRIEVAL_MONGODB_URI": mongo_uri,
            "RETRIEVAL_DATA_DIR": str(self._data),
            "RETRIEVAL_DEFAULT_NAMESPACE": NAMESPACE,
            "RETRIEVAL_INGEST_DOCUMENTS_PER_WRITE": "2",
            "RETRIEVAL_LOG_LEVEL": "ERROR",
            "RETRIEVAL_LOG_FORMAT": "json",
        }
        self._mongo_uri = mongo_uri
        self.windows_s: dict[str, float] = {}
        """How long after its start each task is killed at the latest."""

    @contextmanager
    def _started(self, version: int, task: str = SYNC) -> Iterator[subprocess.Popen[str]]:
        """A child doing ``task`` with ``version``, once it has said it is ready; killed on
        leaving."""
        with subprocess.Popen(
            [sys.executable, "-m", "retrieval_bench.crash", task, str(version), str(self._backups)],
            env=self._env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as child:
            try:
                assert child.stdout is not None
                line = child.stdout.readline().strip()
                if line != READY:
                    raise RuntimeError(f"the ingesting process did not start (said {line!r})")
                yield child
            finally:
                child.kill()

    def complete(self, version: int, task: str = SYNC) -> float:
        """Run one sync (or backup, or restore) to its end; returns the seconds it wrote
        for."""
        with self._started(version, task) as child:
            started = time.monotonic()
            if child.wait(timeout=RUN_TIMEOUT_S) != 0:
                raise RuntimeError(f"the {task} of version {version} failed")
            return time.monotonic() - started

    def kill_during(self, version: int, task: str) -> bool:
        """Start a sync, a deletion or a restore and SIGKILL it at a random instant; False if
        it finished first."""
        with self._started(version, task) as child:
            time.sleep(self._rng.uniform(0, self.windows_s[RESTORE if task == RESTORE else SYNC]))
            return child.poll() is None

    async def mismatches(self, version: int, namespace: str = NAMESPACE) -> int:
        """``mismatches`` of ``namespace`` in the stores with the chunks of ``version`` of
        the corpus, read through a container on the children's MongoDB and data
        directory."""
        container = Container(
            settings=Settings(_env_file=None, mongodb_uri=self._mongo_uri, data_dir=self._data)
        )
        try:
            await start_resources(container)
            ingestion = await resolve(container.ingestion_service)
            expected = {
                document.document_id: {c.chunk_id for c in ingestion.split(document, NAMESPACE)}
                for document in corpus(version)
            }
            stores = ChunkStores(
                await resolve(container.vector_index),
                await resolve(container.keyword_index),
                await resolve(container.chunk_repository),
                await resolve(container.chunk_graph),
            )
            found = await audit(stores, await resolve(container.document_ledger), namespace)
        finally:
            await resolve(container.shutdown_resources)
        return mismatches(found, expected)


def mismatches(found: NamespaceAudit, expected: dict[str, set[str]]) -> int:
    """Chunks stored wrongly (missing, extra, or without their text, vector, keyword entry or
    graph record) plus documents whose record is not committed with the chunk ids ``expected``
    of it."""
    wanted = set().union(*expected.values())
    stores = [found.vectors, found.keywords, set(found.texts)]
    if found.graph is not None:
        stores.append(found.graph)
    wrong = sum(len(stored ^ wanted) for stored in stores)
    for document_id, chunk_ids in expected.items():
        record = found.records.get(document_id)
        if record is None or not record.is_current(fingerprint(chunk_ids)):
            wrong += 1
    stored = {document_id for document_id, r in found.records.items() if r.state is not None}
    return wrong + len(stored - expected.keys())


def run_harness(kills: int, seed: int, on_kill: Callable[[int], None] | None = None) -> CrashReport:
    """At least ``kills`` SIGKILLs of a real ingesting process, each cycle checked."""
    rng = random.Random(seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="retrieval-crash-") as workdir:
        server = SecantusDBServer(storage_path=str(Path(workdir) / "mongo"), port=0)
        server.start()
        try:
            harness = Harness(Path(workdir), server.uri, rng)
            harness.complete(0)
            harness.complete(1)
            synced = []
            for version in BACKED_UP:
                synced.append(harness.complete(version))
                harness.complete(version, BACKUP)
            restored = [harness.complete(version, RESTORE) for version in BACKED_UP]
            harness.windows_s = {SYNC: max(synced) * 1.2, RESTORE: max(restored) * 1.2}
            done = restore_kills = reruns = wrong = 0
            version = 1
            while done < kills:
                if reruns % RESTORE_CYCLES == 1:
                    for _ in range(rng.randint(1, 4)):
                        backup = rng.choice(BACKED_UP)
                        killed = harness.kill_during(backup, RESTORE)
                        done += killed
                        restore_kills += killed
                    harness.complete(backup, RESTORE)
                    wrong += asyncio.run(harness.mismatches(backup, RESTORED))
                else:
                    for _ in range(rng.randint(1, 4)):
                        version += 1
                        done += harness.kill_during(version, DELETE if rng.random() < 0.3 else SYNC)
                    harness.complete(version)
                    wrong += asyncio.run(harness.mismatches(version))
                reruns += 1
                if on_kill is not None:
                    on_kill(done)
        finally:
            server.stop()
    return CrashReport(done, restore_kills, reruns, wrong, time.monotonic() - started)


async def write_version(task: str, version: int, backups: Path) -> bool:
    """The child: start the application, say so, then sync the namespace to one version of
    the corpus, delete every document under ``COPIES``, back the namespace up as that
    version, or restore that version's backup into ``RESTORED``."""
    file = backups / f"{version}.backup"
    async with running(Settings()) as app:
        print(READY, flush=True)
        if task == DELETE:
            report = await app.library.delete(NAMESPACE, source_prefix=COPIES)
            return not report.busy
        if task == BACKUP:
            return not (await app.backups.backup(NAMESPACE, file)).left_out
        if task == RESTORE:
            return not (await app.backups.restore(file, RESTORED, replace=True)).failed
        request = SyncRequest(corpus(version), [ROOT], NAMESPACE, allow_mass_delete=True)
        synced = await app.sync.sync(request)
    return not synced.busy and not synced.count(Outcome.FAILED)


if __name__ == "__main__":
    sys.exit(
        0 if asyncio.run(write_version(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))) else 1
    )

"""Several ``retrieval serve`` replicas over one MongoDB-protocol server and the Pinecone
stand-ins (dense, sparse and inference) made eventually consistent: what the platform runs,
on one machine. Each replica has a data directory and a host id of its own (as if it ran on a
machine of its own); they share every store. The stand-ins run in a child process
(``retrieval_testkit.standin_process``), which can be stalled and whose lag can change; a
replica can be killed and started again on its port."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from retrieval.grpc import RetrievalClient
from retrieval.service.ingestion.reconciliation import ReconcileReport
from retrieval_testkit.needledb_server import NeedleDb
from retrieval_testkit.served_process import CLI, ServedProcess, serve_environment, served_process
from retrieval_testkit.standin_process import StandInProcess, standin_process

DIMENSION = 1024
CALL_TIMEOUT_S = 60.0
"""Long enough for a write that waits its turn behind other writers on a loaded machine."""
API_KEY = "standin-key"


class Replica:
    """One ``retrieval serve`` replica, killed and started again on the port it first took."""

    def __init__(self, workdir: Path, environment: dict[str, str]) -> None:
        self._workdir = workdir
        self._environment = environment
        self._running = AsyncExitStack()
        self.served: ServedProcess | None = None

    async def start(self) -> None:
        """Start the process; return once it serves."""
        serving = served_process(self._workdir, self._environment)
        self.served = await self._running.enter_async_context(serving)
        self._environment = self._environment | {"RETRIEVAL_GRPC_PORT": str(self.served.port)}

    async def kill(self) -> None:
        """SIGKILL the process (``served_process`` does on its way out); return once it is
        reaped."""
        await self._running.aclose()

    @property
    def address(self) -> str:
        assert self.served is not None, "start the replica first"
        return self.served.address


@dataclass(frozen=True)
class ReplicaSet:
    """The running replicas, a client of each, and how to reach their stores."""

    replicas: list[Replica]
    clients: list[RetrievalClient]
    standins: StandInProcess
    environment: dict[str, str]
    """A replica's environment but its data directory and port: for a command run beside."""
    bound_s: float
    """The freshness the replicas promise: the index's lag plus a second."""

    async def reconcile_report(self, workdir: Path, namespace: str) -> ReconcileReport:
        """``retrieval reconcile --dry-run`` of ``namespace``, run beside the replicas."""
        environment = self.environment | {"RETRIEVAL_DATA_DIR": str(workdir / "reconcile")}
        process = await asyncio.create_subprocess_exec(
            str(CLI),
            "reconcile",
            "--namespace",
            namespace,
            "--dry-run",
            "--json",
            cwd=workdir,
            env=environment,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await process.communicate()
        if not out.strip():
            raise RuntimeError(f"reconcile printed no report: {err.decode()[-2000:]}")
        return ReconcileReport.model_validate(json.loads(out))


@asynccontextmanager
async def replica_set(
    workdir: Path,
    mongo_uri: str,
    replicas: int = 2,
    lag_s: float = 1.0,
    needledb: NeedleDb | None = None,
    freshness_s: float | None = None,
    **variables: str,
) -> AsyncIterator[ReplicaSet]:
    """``replicas`` served processes on fresh stores whose writes show ``lag_s`` late; with
    ``needledb``, the dense index is a new index of that emulator (which shows writes at
    once) and the stand-ins serve the sparse index and the embeddings. The replicas assume
    the index shows writes within ``freshness_s`` (``RETRIEVAL_INDEX_FRESHNESS_S``; the
    bound, by default); ``variables`` add ``RETRIEVAL_`` ones."""
    bound_s = lag_s + 1.0
    database = f"replicas_{uuid.uuid4().hex[:10]}"
    api_key = API_KEY if needledb is None else needledb.api_key
    async with AsyncExitStack() as stack:
        standins = await stack.enter_async_context(standin_process(DIMENSION, lag_s, api_key))
        dense_host = (
            standins.dense_url
            if needledb is None
            else needledb.create_index(f"replicas-{uuid.uuid4().hex[:8]}", DIMENSION)
        )
        shared = {
            "RETRIEVAL_INDEX_BACKEND": "pinecone",
            "RETRIEVAL_EMBEDDER_BACKEND": "pinecone",
            "RETRIEVAL_PINECONE_API_KEY": api_key,
            "RETRIEVAL_PINECONE_INDEX_HOST": dense_host,
            "RETRIEVAL_PINECONE_CONTROL_HOST": standins.dense_url,
            "RETRIEVAL_PINECONE_SPARSE_INDEX_HOST": standins.sparse_url,
            "RETRIEVAL_MONGODB_URI": mongo_uri,
            "RETRIEVAL_MONGODB_DATABASE": database,
            "RETRIEVAL_INDEX_FRESHNESS_S": str(bound_s if freshness_s is None else freshness_s),
            **variables,
        }
        started = [
            Replica(
                workdir,
                serve_environment(
                    workdir / f"replica-{n}", RETRIEVAL_HOST_ID=f"replica-{n}", **shared
                ),
            )
            for n in range(replicas)
        ]
        for replica in started:
            stack.push_async_callback(replica.kill)
        await asyncio.gather(*(replica.start() for replica in started))
        clients = [
            await stack.enter_async_context(
                RetrievalClient.connect(replica.address, timeout=CALL_TIMEOUT_S)
            )
            for replica in started
        ]
        yield ReplicaSet(started, clients, standins, serve_environment(workdir, **shared), bound_s)

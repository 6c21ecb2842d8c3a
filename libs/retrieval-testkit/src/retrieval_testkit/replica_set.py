"""Several ``retrieval serve`` replicas over one MongoDB-protocol server and the Pinecone
stand-ins (dense, sparse and inference) made eventually consistent: what the platform runs,
on one machine. Each replica has a data directory of its own; they share every store."""

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
from retrieval_testkit.pinecone_standin import PineconeStandIn
from retrieval_testkit.served_process import CLI, ServedProcess, serve_environment, served_process

DIMENSION = 1024
CALL_TIMEOUT_S = 60.0
"""Long enough for a write that waits its turn behind other writers on a loaded machine."""


@dataclass(frozen=True)
class ReplicaSet:
    """The running replicas, a client of each, and how to reach their stores."""

    processes: list[ServedProcess]
    clients: list[RetrievalClient]
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
) -> AsyncIterator[ReplicaSet]:
    """``replicas`` served processes on fresh stores whose writes show ``lag_s`` late; with
    ``needledb``, the dense index is a new index of that emulator (which shows writes at
    once) and the stand-ins serve the sparse index and the embeddings. The replicas assume
    the index shows writes within ``freshness_s`` (``RETRIEVAL_INDEX_FRESHNESS_S``; the
    bound, by default)."""
    bound_s = lag_s + 1.0
    database = f"replicas_{uuid.uuid4().hex[:10]}"
    same_key = {} if needledb is None else {"api_key": needledb.api_key}
    async with AsyncExitStack() as stack:
        inference = stack.enter_context(
            PineconeStandIn(dimension=DIMENSION, lag_seconds=lag_s, **same_key)
        )
        sparse = stack.enter_context(
            PineconeStandIn(vector_type="sparse", api_key=inference.api_key, lag_seconds=lag_s)
        )
        dense_host = (
            inference.url
            if needledb is None
            else needledb.create_index(f"replicas-{uuid.uuid4().hex[:8]}", DIMENSION)
        )
        shared = {
            "RETRIEVAL_INDEX_BACKEND": "pinecone",
            "RETRIEVAL_EMBEDDER_BACKEND": "pinecone",
            "RETRIEVAL_PINECONE_API_KEY": inference.api_key,
            "RETRIEVAL_PINECONE_INDEX_HOST": dense_host,
            "RETRIEVAL_PINECONE_CONTROL_HOST": inference.url,
            "RETRIEVAL_PINECONE_SPARSE_INDEX_HOST": sparse.url,
            "RETRIEVAL_MONGODB_URI": mongo_uri,
            "RETRIEVAL_MONGODB_DATABASE": database,
            "RETRIEVAL_INDEX_FRESHNESS_S": str(bound_s if freshness_s is None else freshness_s),
        }
        started = [
            served_process(workdir, serve_environment(workdir / f"replica-{n}", **shared))
            for n in range(replicas)
        ]
        processes = list(
            await asyncio.gather(*(stack.enter_async_context(serving) for serving in started))
        )
        clients = [
            await stack.enter_async_context(
                RetrievalClient.connect(served.address, timeout=CALL_TIMEOUT_S)
            )
            for served in processes
        ]
        yield ReplicaSet(processes, clients, serve_environment(workdir, **shared), bound_s)

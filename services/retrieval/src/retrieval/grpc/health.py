"""Keeps the gRPC health service in step with the stores while the server runs."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import grpc
import structlog
from grpc_health.v1 import health_pb2

from retrieval.domain.collection_health import HealthStatus, Verdict, unreachable
from retrieval.service.stats import StatsService

log = structlog.get_logger("grpc")

ServingStatus = health_pb2.HealthCheckResponse.ServingStatus
Publish = Callable[[ServingStatus], Awaitable[None]]
Repair = Callable[[], Awaitable[None]]

MONITOR_TASK = "grpc-health-monitor"
running_monitors: set[asyncio.Task[None]] = set()
"""The tasks of started monitors: the event loop keeps only weak references to tasks."""


class HealthMonitor:
    """Probes the stores every ``interval_s`` (``StatsService.reachability``: one cheap call
    per store, bounded by the probe timeout) and publishes NOT_SERVING while one does not
    answer, SERVING once both answer again. After each probe both answer, it runs ``repair``
    (what failed writes left, see ``retrieval.grpc.write_repair``) unless it still runs."""

    def __init__(
        self, stats: StatsService, publish: Publish, repair: Repair, interval_s: float
    ) -> None:
        self._stats = stats
        self._publish = publish
        self._repair = repair
        self._interval_s = interval_s
        self._status = HealthStatus.GREEN
        self._repairing: asyncio.Task[None] | None = None

    async def check(self) -> None:
        """Probe once; publish the serving status when it changed (RED while a store does not
        answer, else GREEN: orphans are not looked for here, ``GetStats`` audits them)."""
        verdict = await self._probe()
        if verdict.status is not self._status:
            red = verdict.status is HealthStatus.RED
            if red:
                log.warning("grpc.health_changed", status=verdict.status, reasons=verdict.reasons)
            else:
                log.info("grpc.health_changed", status=verdict.status)
            await self._publish(ServingStatus.NOT_SERVING if red else ServingStatus.SERVING)
            self._status = verdict.status
        if verdict.status is HealthStatus.GREEN and (
            self._repairing is None or self._repairing.done()
        ):
            self._repairing = asyncio.create_task(self._repaired())

    def start(self, server: grpc.aio.Server) -> None:
        """Check every ``interval_s`` until ``server`` has stopped."""
        task = asyncio.create_task(self._watch(server), name=MONITOR_TASK)
        running_monitors.add(task)
        task.add_done_callback(running_monitors.discard)

    async def _probe(self) -> Verdict:
        try:
            return await self._stats.reachability()
        except Exception as error:
            log.exception("grpc.health_probe_failed")
            return unreachable("stores", f"the probe failed: {error}")

    async def _repaired(self) -> None:
        try:
            await self._repair()
        except Exception:
            log.exception("grpc.repair_failed")

    async def _watch(self, server: grpc.aio.Server) -> None:
        checks = asyncio.create_task(self._check_forever())
        try:
            await server.wait_for_termination()
        finally:
            for task in (checks, self._repairing):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(self._interval_s)
            await self.check()

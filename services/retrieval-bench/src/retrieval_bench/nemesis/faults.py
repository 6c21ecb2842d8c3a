"""The faults done to a replica set under load, one at a time: each starts, lasts
``hold_s`` and is healed, and its window runs from its start to the end of its healing (the
killed process serving again, the server listening, the lag set back)."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from enum import StrEnum

from retrieval_testkit.mongo_process import MongoProcess
from retrieval_testkit.replica_set import ReplicaSet


class FaultKind(StrEnum):
    REPLICA_KILL = "replica_kill"
    """SIGKILL of one replica, started again on its port."""
    INDEX_STALL = "index_stall"
    """SIGSTOP of the Pinecone stand-ins' process (indexes and embeddings), then SIGCONT."""
    MONGO_RESTART = "mongo_restart"
    """SIGKILL of the MongoDB server, started again on its port and data."""
    INDEX_LAG = "index_lag"
    """The index's lag raised above ``RETRIEVAL_INDEX_FRESHNESS_S``, then set back."""


@dataclass(frozen=True)
class FaultWindow:
    kind: FaultKind
    started: float
    ended: float


class Nemesis:
    """Does each kind of fault to ``replicas`` and the MongoDB server ``mongo``: the stand-ins
    lag ``lag_s`` but while a lag fault raises it to ``raised_lag_s``."""

    def __init__(
        self,
        replicas: ReplicaSet,
        mongo: MongoProcess,
        lag_s: float,
        raised_lag_s: float,
        hold_s: float,
        rng: random.Random,
    ) -> None:
        self._replicas = replicas
        self._mongo = mongo
        self.lag_s = lag_s
        self.raised_lag_s = raised_lag_s
        self._hold_s = hold_s
        self._rng = rng

    async def inject(self, kind: FaultKind) -> FaultWindow:
        """Do the fault, hold it, heal it; its window."""
        started = time.monotonic()
        if kind is FaultKind.REPLICA_KILL:
            victim = self._rng.choice(self._replicas.replicas)
            await victim.kill()
            await asyncio.sleep(self._hold_s)
            await victim.start()
        elif kind is FaultKind.INDEX_STALL:
            self._replicas.standins.stall()
            await asyncio.sleep(self._hold_s)
            self._replicas.standins.resume()
        elif kind is FaultKind.MONGO_RESTART:
            await self._mongo.kill()
            await asyncio.sleep(self._hold_s)
            await self._mongo.start()
        else:
            await self._replicas.standins.set_lag(self.raised_lag_s)
            await asyncio.sleep(self._hold_s)
            await self._replicas.standins.set_lag(self.lag_s)
        return FaultWindow(kind, started, time.monotonic())

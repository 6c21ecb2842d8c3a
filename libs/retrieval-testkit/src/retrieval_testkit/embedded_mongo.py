"""The application on the embedded MongoDB, and killing that server under it."""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from dependency_injector import providers

from retrieval.adapters.mongo.embedded_supervisor import EmbeddedMongoSupervisor
from retrieval.container import Container
from retrieval.lifecycle import Application, running
from retrieval.ports.embedder import Embedder
from retrieval.retries import RetryPolicy
from retrieval.settings import Settings
from retrieval_testkit.hash_embedder import HashEmbedder
from retrieval_testkit.waiting import until


def pausing_supervisor(settings: Settings, restart_pause_s: float) -> EmbeddedMongoSupervisor:
    """The supervisor of ``settings``' embedded server, pausing ``restart_pause_s`` before
    each restart, so an outage lasts at least that long."""
    pause = RetryPolicy(initial_backoff=restart_pause_s, max_backoff=restart_pause_s)
    return EmbeddedMongoSupervisor(settings.mongo_dir, backoff=pause)


@asynccontextmanager
async def on_embedded_mongo(
    settings: Settings, supervisor: EmbeddedMongoSupervisor, embedder: Embedder | None = None
) -> AsyncIterator[tuple[Application, Container]]:
    """The real container, its MongoDB run by ``supervisor`` and its indexes embedded under
    ``settings.data_dir``, with ``embedder`` (``HashEmbedder`` by default) for the model."""
    container = Container(settings=settings)
    container.override_providers(
        model_embedder=providers.Object(embedder or HashEmbedder()),
        embedded_mongo=providers.Object(supervisor),
    )
    async with running(settings, container) as app:
        yield app, container


async def kill_server(supervisor: EmbeddedMongoSupervisor) -> int:
    """SIGKILL the server; returns its pid once the supervisor has seen it die."""
    pid = supervisor.pid
    if pid is None:
        raise RuntimeError("the embedded MongoDB is not running")
    os.kill(pid, signal.SIGKILL)
    await until(lambda: supervisor.pid is None, "the supervisor to see the server die")
    return pid


async def restarted(supervisor: EmbeddedMongoSupervisor) -> int:
    """The pid of the server once the supervisor has it accepting connections again."""
    await until(lambda: supervisor.pid is not None, "the server to be restarted")
    pid = supervisor.pid
    assert pid is not None
    return pid

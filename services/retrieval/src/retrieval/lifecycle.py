"""A running application: start the container's resources, hand out its services, stop."""

from __future__ import annotations

import asyncio
import gc
import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import structlog
from dependency_injector import providers

from retrieval.container import Container
from retrieval.errors import RetrievalError
from retrieval.observability.telemetry import Telemetry
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.backup.backups import Backups
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles
from retrieval.service.ingestion.repair import Repair
from retrieval.service.ingestion.sync import LibrarySync
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.service.validation_service import ValidationService
from retrieval.settings import Settings


@dataclass(frozen=True)
class Application:
    """The services of a running container: every write of chunks goes through
    ``ingestion``; ``library`` reads and deletes documents, ``sync`` mirrors folders,
    ``repair`` reconciles, ``local_files`` takes files and folders in, and ``backups``
    writes namespaces to files and back."""

    settings: Settings
    retrieval: RetrievalService
    ingestion: IngestionService
    library: Library
    sync: LibrarySync
    repair: Repair
    local_files: LocalFiles
    stats: StatsService
    answers: AnswerService
    validation: ValidationService
    telemetry: Telemetry
    backups: Backups


async def resolve(provider: providers.Provider) -> Any:
    value = provider()
    return await value if inspect.isawaitable(value) else value


async def start_resources(container: Container) -> None:
    """Start the resources the container declares at once, as ``init_resources`` does, but
    when one fails let the others finish starting (or failing) before raising its error: the
    shutdown that follows closes the clients, and a MongoDB client closed under a start still
    using it can hang. An adapter's resource inside a selector starts when it is selected."""
    declared = (p for p in container.providers.values() if isinstance(p, providers.Resource))
    starting = [started for provider in declared if inspect.isawaitable(started := provider.init())]
    outcomes = await asyncio.gather(*starting, return_exceptions=True)
    failures = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    if failures:
        raise failures[0]


async def recover_left_writes(repair: Repair) -> None:
    """Repair the writes this host's stopped processes left; a store that does not answer
    yet leaves them to the next write of each document, or to ``reconcile``."""
    try:
        await repair.recover()
    except RetrievalError as error:
        structlog.get_logger("retrieval").warning("reconcile.recover_failed", error=str(error))


@asynccontextmanager
async def running(
    settings: Settings, container: Container | None = None, *, recover: bool = True
) -> AsyncIterator[Application]:
    """Start every resource (stores, clients), yield the services, then shut down cleanly.
    Unless ``recover`` is False (a command that must change nothing: a dry run, a read), the
    writes this host's stopped processes left are repaired first.

    With ``settings.gc_freeze``, every object alive once started is frozen out of the garbage
    collector until shutdown: a full collection would otherwise walk every record the embedded
    stores loaded, all threads stopped meanwhile (docs/performance.md). There is no collection
    first (it cost about 0.1 s a start in the test suite's process): what garbage the
    start-up left is kept until shutdown, once."""
    container = container or Container(settings=settings)
    try:
        # the embedded indexes' locks, before anything starts
        await resolve(container.backend_index)
        await resolve(container.keyword_index)
        await start_resources(container)
        application = Application(
            settings=settings,
            retrieval=await resolve(container.retrieval_service),
            ingestion=await resolve(container.ingestion_service),
            library=await resolve(container.library),
            sync=await resolve(container.library_sync),
            repair=await resolve(container.repair),
            local_files=await resolve(container.local_files),
            stats=await resolve(container.stats_service),
            answers=await resolve(container.answer_service),
            validation=await resolve(container.validation_service),
            telemetry=await resolve(container.telemetry),
            backups=await resolve(container.backups),
        )
        if recover:
            await recover_left_writes(application.repair)
        if settings.gc_freeze:
            gc.freeze()
        yield application
    finally:
        if settings.gc_freeze:
            gc.unfreeze()
        await resolve(container.shutdown_resources)

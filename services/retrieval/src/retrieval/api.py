"""``retrieval.connect()``: the knowledge base of this process, for Python callers::

    async with retrieval.connect() as kb:
        await kb.ingest(["docs/"], namespace="handbook", domain="software_docs")
        result = await kb.retrieve("how do I rotate keys?", namespace="handbook")

``connect`` starts the configured stores (``running``, over the container's wiring) and stops
them on leaving; ``connect_sync`` does the same for code without an event loop. Each method
makes the service calls the command of the same name makes, so files are read, checked and
written exactly as ``retrieval ingest`` or ``sync`` would (the use case
``retrieval.service.ingestion.local_files``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import aclosing, asynccontextmanager
from pathlib import Path
from typing import Any

from retrieval.client_api import KnowledgeBaseApi
from retrieval.deadlines import answered_within
from retrieval.domain.allowed_domains import check_domains
from retrieval.domain.answers import Answer, AnswerEvent
from retrieval.domain.models import RetrievalQuery, RetrievalResult, namespace_or_default
from retrieval.domain.search_plan import SearchPlan
from retrieval.errors import ConfigurationError
from retrieval.lifecycle import Application, running
from retrieval.service.backup.backups import BackupReport, RestoreReport
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.local_files import LocalFiles
from retrieval.service.ingestion.outcomes import DeleteReport
from retrieval.service.ingestion.requests import DeleteRequest
from retrieval.service.stats import CollectionStats
from retrieval.settings import Settings
from retrieval.sync_facade import SyncKnowledgeBase


class KnowledgeBase(KnowledgeBaseApi):
    """The started stores of this process, with the services the command line calls: files
    and documents in, typed results out. ``connect()`` yields one; its methods are
    ``KnowledgeBaseApi``'s (``retrieval.client_api``), which ``RetrievalClient`` shares.
    ``timeout=`` bounds a call's work here, past it ``BackendTimeoutError``."""

    def __init__(self, application: Application) -> None:
        self._app = application

    @property
    def settings(self) -> Settings:
        """The settings the stores were started with."""
        return self._app.settings

    async def _retrieve(self, query: RetrievalQuery, timeout: float | None) -> RetrievalResult:
        async with answered_within(timeout, "retrieve"):
            return await self._app.retrieval.retrieve_query(query)

    async def _answer(self, query: RetrievalQuery, timeout: float | None) -> Answer:
        async with answered_within(timeout, "ask"):
            return await self._app.answers.answer(query)

    async def _answer_stream(
        self, query: RetrievalQuery, timeout: float | None
    ) -> AsyncGenerator[AnswerEvent, None]:
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        async with aclosing(self._app.answers.stream(query)) as events:
            while True:
                async with answered_within(left_until(deadline), "ask"):
                    event = await anext(events, None)
                if event is None:
                    return
                yield event

    async def _delete(self, request: DeleteRequest, timeout: float | None) -> DeleteReport:
        async with answered_within(timeout, "delete"):
            return await self._app.library.apply(request)

    async def _documents(
        self, namespace: str | None, source_prefix: str | None, timeout: float | None
    ) -> list[DocumentSummary]:
        async with answered_within(timeout, "documents"):
            return await self._app.library.documents(namespace, source_prefix=source_prefix)

    async def _stats(self, timeout: float | None) -> CollectionStats:
        async with answered_within(timeout, "stats"):
            return await self._app.stats.collect()

    def _local_files(self) -> LocalFiles:
        return self._app.local_files

    def _target(self, namespace: str | None, domain: str | None) -> str:
        """The namespace to write, once the domain given for documents is known allowed."""
        if domain is not None:
            check_domains([domain], self.settings.allowed_domains)
        return namespace_or_default(namespace, self.settings.default_namespace)

    def _max_file_bytes(self) -> int:
        return self.settings.ingest_max_file_bytes


def left_until(deadline: float | None) -> float | None:
    """The seconds left until ``deadline`` on the running loop's clock (None: no deadline)."""
    return None if deadline is None else deadline - asyncio.get_running_loop().time()


def search_hint(names: Sequence[str]) -> str:
    """Where the search options among ``names`` (``search_mode``) are set: in ``search``."""
    options = [name.removeprefix("search_") for name in names]
    known = [option for option in options if option in SearchPlan.model_fields]
    if not known:
        return ""
    return f" (search options are one setting: search={{{', '.join(map(repr, known))}: ...}})"


def configured(settings: Settings | None, overrides: Mapping[str, Any]) -> Settings:
    """``settings`` (else the environment's) with ``overrides``, validated."""
    unknown = sorted(overrides.keys() - Settings.model_fields.keys())
    if unknown:
        raise ConfigurationError(f"no such setting: {', '.join(unknown)}{search_hint(unknown)}")
    given = settings.model_dump() if settings is not None else {}
    return Settings(**{**given, **overrides})


@asynccontextmanager
async def connect(
    settings: Settings | None = None, **overrides: Any
) -> AsyncIterator[KnowledgeBase]:
    """Start the stores ``settings`` configure (default: ``Settings()``, read from the
    ``RETRIEVAL_*`` environment and ``.env``), changed by ``overrides`` (settings by field
    name: ``data_dir="kb-data"``); yield a ``KnowledgeBase`` over them; stop them on leaving.

    Only warnings and errors are logged (to stderr) until the program configures logging,
    e.g. with ``retrieval.logging.configure_logging(level)``.
    Raises ``ConfigurationError`` for an override that names no setting, pydantic's
    ``ValidationError`` for a bad value, and what starting a store raises
    (``DataDirectoryInUseError`` when another process holds the data directory).
    """
    async with running(configured(settings, overrides)) as application:
        yield KnowledgeBase(application)


def connect_sync(settings: Settings | None = None, **overrides: Any) -> SyncKnowledgeBase:
    """``connect``, for code without an event loop: the same ``KnowledgeBase`` behind
    blocking methods, run on a loop of its own. Close it (``with``, or ``close()``) to stop
    the stores."""
    return SyncKnowledgeBase(lambda: connect(settings, **overrides))


async def backup(
    namespace: str, file: str | Path, settings: Settings | None = None, **overrides: Any
) -> BackupReport:
    """Start the stores as ``connect`` does, write ``namespace`` to ``file`` as ``retrieval
    backup`` does, and stop them. Not a ``KnowledgeBase`` method: an operator's act on the
    stores, which the gRPC client (``KnowledgeBaseApi``) does not offer."""
    async with running(configured(settings, overrides)) as application:
        return await application.backups.backup(namespace, Path(file))


async def restore(
    file: str | Path,
    namespace: str | None = None,
    *,
    replace: bool = False,
    settings: Settings | None = None,
    **overrides: Any,
) -> RestoreReport:
    """Start the stores as ``connect`` does, restore ``file`` into ``namespace`` (default:
    the backed-up one) as ``retrieval restore`` does, and stop them."""
    async with running(configured(settings, overrides)) as application:
        return await application.backups.restore(Path(file), namespace, replace=replace)

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
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from retrieval.adapters.files.document_files import LoadedDocuments, read_documents
from retrieval.adapters.files.local_sources import source_or_none
from retrieval.client_api import LocalPath, Sources, local_paths, question_query, split_sources
from retrieval.domain.allowed_domains import check_domains
from retrieval.domain.answers import Answer, AnswerEvent
from retrieval.domain.models import (
    RetrievalOptions,
    RetrievalResult,
    namespace_or_default,
    validated,
)
from retrieval.domain.search_plan import SearchPlan
from retrieval.errors import ConfigurationError
from retrieval.lifecycle import Application, running
from retrieval.service.backup.backups import BackupReport, RestoreReport
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.local_files import IngestReport, PathSync
from retrieval.service.ingestion.outcomes import DeleteReport
from retrieval.service.stats import CollectionStats
from retrieval.settings import Settings
from retrieval.sync_facade import SyncKnowledgeBase


class KnowledgeBase:
    """The started stores of this process, with the services the command line calls: files
    and documents in, typed results out. ``connect()`` yields one; its methods are those of
    ``KnowledgeBaseApi`` (``retrieval.client_api``), which ``RetrievalClient`` shares."""

    def __init__(self, application: Application) -> None:
        self._app = application

    @property
    def settings(self) -> Settings:
        """The settings the stores were started with."""
        return self._app.settings

    async def retrieve(
        self,
        query: str,
        *,
        namespace: str | None = None,
        top_k: int = 5,
        threshold: float = 0.0,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        **options: Any,
    ) -> RetrievalResult:
        """As ``KnowledgeBaseApi.retrieve``."""
        return await self._app.retrieval.retrieve(
            query,
            domains,
            top_k,
            threshold,
            namespace,
            validated(RetrievalOptions, **options),
            source_prefix=source_or_none(source_prefix),
            section=section,
        )

    async def ingest(
        self,
        sources: Sources,
        *,
        namespace: str | None = None,
        domain: str | None = None,
        replace: bool = False,
    ) -> IngestReport:
        """As ``KnowledgeBaseApi.ingest``."""
        paths, given = split_sources(sources)
        target = self._target(namespace, domain)
        loaded = await self._read(paths, domain)
        return await self._app.local_files.ingest(loaded, target, documents=given, replace=replace)

    async def sync(
        self,
        paths: LocalPath | Iterable[LocalPath],
        *,
        namespace: str | None = None,
        domain: str | None = None,
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
    ) -> PathSync:
        """As ``KnowledgeBaseApi.sync``."""
        local = local_paths(paths)
        target = self._target(namespace, domain)
        loaded = await self._read(local, domain)
        return await self._app.local_files.sync(
            local,
            loaded,
            target,
            dry_run=dry_run,
            replace=replace,
            allow_mass_delete=allow_mass_delete,
        )

    async def delete(
        self,
        document_ids: Sequence[str] = (),
        *,
        namespace: str | None = None,
        source_prefix: str | None = None,
        dry_run: bool = False,
    ) -> DeleteReport:
        """As ``KnowledgeBaseApi.delete``."""
        return await self._app.library.delete(
            namespace, document_ids, source_prefix=source_or_none(source_prefix), dry_run=dry_run
        )

    async def documents(
        self, *, namespace: str | None = None, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        """As ``KnowledgeBaseApi.documents``."""
        return await self._app.library.documents(
            namespace, source_prefix=source_or_none(source_prefix)
        )

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> Answer:
        """As ``KnowledgeBaseApi.ask``."""
        query = question_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return await self._app.answers.answer(query)

    def ask_stream(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> AsyncGenerator[AnswerEvent, None]:
        """As ``KnowledgeBaseApi.ask_stream``."""
        query = question_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return self._app.answers.stream(query)

    async def stats(self) -> CollectionStats:
        """As ``KnowledgeBaseApi.stats``."""
        return await self._app.stats.collect()

    def _target(self, namespace: str | None, domain: str | None) -> str:
        """The namespace to write, once the domain given for documents is known allowed."""
        if domain is not None:
            check_domains([domain], self.settings.allowed_domains)
        return namespace_or_default(namespace, self.settings.default_namespace)

    async def _read(self, paths: list[Path], domain: str | None) -> LoadedDocuments:
        return await asyncio.to_thread(
            read_documents,
            paths,
            domain=domain,
            max_file_bytes=self.settings.ingest_max_file_bytes,
        )


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

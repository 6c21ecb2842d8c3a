"""``retrieval.connect()``: the knowledge base of this process, for Python callers::

    async with retrieval.connect() as kb:
        await kb.ingest(["docs/"], namespace="handbook", domain="software_docs")
        result = await kb.retrieve("how do I rotate keys?", namespace="handbook")

``connect`` starts the configured stores (``running``, over the container's wiring) and stops
them on leaving. Each method makes the service calls the command of the same name makes, so
files are read, checked and written exactly as ``retrieval ingest`` or ``sync`` would (the
use case ``retrieval.service.ingestion.local_files``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from retrieval.adapters.files.document_files import LoadedDocuments, read_documents
from retrieval.adapters.files.local_sources import source_or_none
from retrieval.domain.allowed_domains import check_domains
from retrieval.domain.answers import Answer, AnswerEvent
from retrieval.domain.models import (
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    namespace_or_default,
    validated,
)
from retrieval.domain.search_plan import SearchPlan
from retrieval.errors import ConfigurationError
from retrieval.lifecycle import Application, running
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.local_files import IngestReport, PathSync
from retrieval.service.ingestion.outcomes import DeleteReport
from retrieval.service.stats import CollectionStats
from retrieval.settings import Settings

LocalPath = str | os.PathLike[str]


class KnowledgeBase:
    """The started stores of this process, with the services the command line calls: files
    and documents in, typed results out. ``connect()`` yields one."""

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
        domains: Sequence[str] = (),
        top_k: int = 5,
        threshold: float = 0.0,
        namespace: str | None = None,
        source_prefix: str | None = None,
        section: str | None = None,
        **options: Any,
    ) -> RetrievalResult:
        """The chunks that best answer ``query``, best first, each with its score per source
        (``scores``); ``threshold`` drops matches under that cosine similarity. ``domains``:
        only these (none: every domain); ``source_prefix``: only documents from this path or
        URL or below it; ``options``: ``RetrievalOptions`` fields (``mode="keyword"``,
        ``max_per_document=1``), each one unset taking its ``RETRIEVAL_SEARCH_*`` setting."""
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
        sources: LocalPath | RagDocument | Iterable[LocalPath | RagDocument],
        *,
        namespace: str | None = None,
        domain: str | None = None,
        replace: bool = False,
    ) -> IngestReport:
        """Write the documents of these files and folders (as ``retrieval ingest`` reads them)
        and these ``RagDocument``s; an unchanged document writes nothing. A file that cannot be
        read, or a document the service refuses, fails alone (``failures``). ``domain`` is
        that of every document read that sets none; ``replace`` lets a file take a document
        id another source holds."""
        single = isinstance(sources, str | os.PathLike | RagDocument)
        listed = [sources] if single else list(sources)
        given = [source for source in listed if isinstance(source, RagDocument)]
        paths = [Path(source) for source in listed if not isinstance(source, RagDocument)]
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
        """Make the namespace hold what these files and folders hold, as ``retrieval sync``
        does: ingest what is new or changed, delete the documents ingested from under them
        whose files are gone. What a file that cannot be read, or a document refused, held
        before is kept. ``dry_run`` changes nothing."""
        local = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
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
        """Delete these documents, and every document whose source is ``source_prefix`` (a
        path or URL) or lies below it; ``dry_run`` only reports."""
        return await self._app.library.delete(
            namespace, document_ids, source_prefix=source_or_none(source_prefix), dry_run=dry_run
        )

    async def documents(
        self, namespace: str | None = None, *, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        """The namespace's documents by id; only those from under ``source_prefix`` if given."""
        return await self._app.library.documents(
            namespace, source_prefix=source_or_none(source_prefix)
        )

    async def ask(
        self,
        question: str,
        *,
        domains: Sequence[str] = (),
        top_k: int = 8,
        namespace: str | None = None,
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> Answer:
        """The configured language model's answer (``RETRIEVAL_LLM_*``) from the ``top_k``
        chunks retrieved for ``question``, citing the ones it used (``citations``)."""
        query = question_query(question, domains, top_k, namespace, source_prefix, section)
        return await self._app.answers.answer(query)

    def ask_stream(
        self,
        question: str,
        *,
        domains: Sequence[str] = (),
        top_k: int = 8,
        namespace: str | None = None,
        source_prefix: str | None = None,
        section: str | None = None,
    ) -> AsyncGenerator[AnswerEvent, None]:
        """``ask``, as the model writes the answer: an ``AnswerDelta`` for each piece of its
        text, then one ``AnswerDone`` with the whole ``Answer`` and its citations. A malformed
        request is refused here; anything else is raised while iterating. Closing the generator
        (``contextlib.aclosing``, cancelling the task iterating it) stops the model."""
        query = question_query(question, domains, top_k, namespace, source_prefix, section)
        return self._app.answers.stream(query)

    async def stats(self) -> CollectionStats:
        """Vectors, chunk texts and orphans per namespace, store sizes, the health status."""
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


def question_query(
    question: str,
    domains: Sequence[str],
    top_k: int,
    namespace: str | None,
    source_prefix: str | None,
    section: str | None,
) -> RetrievalQuery:
    """The query ``ask`` retrieves the context of its answer with."""
    return validated(
        RetrievalQuery,
        query=question,
        domains=tuple(domains),
        top_k=top_k,
        namespace=namespace or None,
        source_prefix=source_or_none(source_prefix),
        section=section,
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

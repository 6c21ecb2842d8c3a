"""One API over the knowledge base, whichever door reaches it.

``KnowledgeBaseApi`` holds the methods Python callers use, written once: ``KnowledgeBase``
(``retrieval.connect()``: the stores in this process) and ``RetrievalClient``
(``retrieval.grpc``: a ``retrieval serve`` over gRPC) each supply only how a checked request
reaches the services, so code written against one runs against the other, with the same
arguments, defaults, checks and result types. ``SyncKnowledgeBase``
(``retrieval.sync_facade``) runs either from code without an event loop.

Importing this module loads neither pydantic nor the models: a call does.
"""

from __future__ import annotations

import asyncio
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from retrieval.adapters.files.document_files import LoadedDocuments
    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import (
        RagDocument,
        RetrievalOptions,
        RetrievalQuery,
        RetrievalResult,
    )
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import IngestReport, LocalFiles, PathSync
    from retrieval.service.ingestion.outcomes import DeleteReport
    from retrieval.service.ingestion.requests import DeleteRequest
    from retrieval.service.stats import CollectionStats

LocalPath = str | os.PathLike[str]
Sources: TypeAlias = "LocalPath | RagDocument | Iterable[LocalPath | RagDocument]"
"""What ``ingest`` takes: files and folders (read as ``retrieval ingest`` reads them), and
``RagDocument``s, one or many."""


class KnowledgeBaseApi(ABC):
    """The knowledge base as Python callers use it: documents in, typed results out. Every
    method takes the namespace as ``namespace=`` (None: the service's default), paths given
    as ``source_prefix`` are read from the working directory, as sources are stored, and
    ``timeout=`` bounds each request the call makes, in seconds (None: the door's default,
    none in process). A request is checked here, the same way on every door."""

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
        timeout: float | None = None,
        **options: Any,
    ) -> RetrievalResult:
        """The ``top_k`` chunks that best answer ``query``, best first, each with its score per
        source (``scores``); ``threshold`` drops matches under that cosine similarity.
        ``domains``: only these (none: every domain); ``source_prefix``: only documents from
        this path or URL or below it; ``section``: only chunks of exactly this section;
        ``options``: ``RetrievalOptions`` fields (``mode="keyword"``, ``max_per_document=1``),
        each one unset taking its ``RETRIEVAL_SEARCH_*`` setting."""
        from retrieval.domain.models import RetrievalOptions, validated

        request = retrieval_query(
            query,
            namespace=namespace,
            top_k=top_k,
            threshold=threshold,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
            options=validated(RetrievalOptions, **options),
        )
        return await self._retrieve(request, timeout)

    async def ingest(
        self,
        sources: Sources,
        *,
        namespace: str | None = None,
        domain: str | None = None,
        replace: bool = False,
        timeout: float | None = None,
    ) -> IngestReport:
        """Write the documents of these files and folders and these ``RagDocument``s; an
        unchanged document writes nothing. A file that cannot be read, or a document the
        service refuses, fails alone (``failures``). ``domain`` is that of every document read
        that sets none; ``replace`` lets a file take a document id another source holds."""
        paths, given = split_sources(sources)
        target = self._target(namespace, domain)
        loaded = await self._read(paths, domain)
        files = self._local_files().within(timeout)
        return await files.ingest(loaded, target, documents=given, replace=replace)

    async def sync(
        self,
        paths: LocalPath | Iterable[LocalPath],
        *,
        namespace: str | None = None,
        domain: str | None = None,
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        timeout: float | None = None,
    ) -> PathSync:
        """Make the namespace hold what these files and folders hold, as ``retrieval sync``
        does: ingest what is new or changed, delete the documents ingested from under them
        whose files are gone. What a file that cannot be read, or a document refused, held
        before is kept. ``dry_run`` changes nothing. Every document of the roots is written
        in one request."""
        local = local_paths(paths)
        target = self._target(namespace, domain)
        loaded = await self._read(local, domain)
        return (
            await self._local_files()
            .within(timeout)
            .sync(
                local,
                loaded,
                target,
                dry_run=dry_run,
                replace=replace,
                allow_mass_delete=allow_mass_delete,
            )
        )

    async def delete(
        self,
        document_ids: Sequence[str] = (),
        *,
        namespace: str | None = None,
        source_prefix: str | None = None,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> DeleteReport:
        """Delete these documents, and every document whose source is ``source_prefix`` (a
        path or URL) or lies below it; ``dry_run`` only reports."""
        from retrieval.adapters.files.local_sources import source_or_none
        from retrieval.service.ingestion.requests import DeleteRequest

        request = DeleteRequest(namespace, document_ids, source_or_none(source_prefix), dry_run)
        return await self._delete(request, timeout)

    async def documents(
        self,
        *,
        namespace: str | None = None,
        source_prefix: str | None = None,
        timeout: float | None = None,
    ) -> list[DocumentSummary]:
        """The namespace's documents by id; only those from under ``source_prefix`` if given."""
        from retrieval.adapters.files.local_sources import source_or_none

        return await self._documents(namespace, source_or_none(source_prefix), timeout)

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """The configured language model's answer (``RETRIEVAL_LLM_*``) from the ``top_k``
        chunks retrieved for ``question``, citing the ones it used (``citations``)."""
        query = retrieval_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return await self._answer(query, timeout)

    def ask_stream(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[AnswerEvent, None]:
        """``ask``, as the model writes the answer: an ``AnswerDelta`` for each piece of its
        text, then one ``AnswerDone`` with the whole ``Answer`` and its citations. A malformed
        request is refused here; anything else is raised while iterating. Closing the generator
        (``contextlib.aclosing``, cancelling the task iterating it) stops the model;
        ``timeout`` bounds the whole stream."""
        query = retrieval_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return self._answer_stream(query, timeout)

    async def stats(self, *, timeout: float | None = None) -> CollectionStats:
        """Vectors, chunk texts and orphans per namespace, store sizes, the health status."""
        return await self._stats(timeout)

    @abstractmethod
    async def _retrieve(self, query: RetrievalQuery, timeout: float | None) -> RetrievalResult:
        """The retrieval service's answer to ``query``."""

    @abstractmethod
    async def _answer(self, query: RetrievalQuery, timeout: float | None) -> Answer:
        """The answer service's answer to ``query``."""

    @abstractmethod
    def _answer_stream(
        self, query: RetrievalQuery, timeout: float | None
    ) -> AsyncGenerator[AnswerEvent, None]:
        """The answer service's events for ``query``."""

    @abstractmethod
    async def _delete(self, request: DeleteRequest, timeout: float | None) -> DeleteReport:
        """The library's deletion of these documents and of those under ``source_prefix``."""

    @abstractmethod
    async def _documents(
        self, namespace: str | None, source_prefix: str | None, timeout: float | None
    ) -> list[DocumentSummary]:
        """The library's list of the namespace's documents, every page of it."""

    @abstractmethod
    async def _stats(self, timeout: float | None) -> CollectionStats:
        """The stores' statistics."""

    @abstractmethod
    def _local_files(self) -> LocalFiles:
        """The local-files use case, writing through this door."""

    def _target(self, namespace: str | None, domain: str | None) -> str | None:
        """The namespace to write, as the door knows it before the files are read."""
        return namespace

    def _max_file_bytes(self) -> int:
        """The largest file read; a door that knows its services' limit says it."""
        from retrieval.adapters.files.document_files import MAX_FILE_BYTES

        return MAX_FILE_BYTES

    async def _read(self, paths: list[Path], domain: str | None) -> LoadedDocuments:
        """The documents of local files and folders, read off the event loop."""
        from retrieval.adapters.files.document_files import read_documents

        return await asyncio.to_thread(
            read_documents, paths, domain=domain, max_file_bytes=self._max_file_bytes()
        )


def split_sources(sources: Sources) -> tuple[list[Path], list[RagDocument]]:
    """The paths and the documents among ``sources``, each in the order given."""
    from retrieval.domain.models import RagDocument

    single = isinstance(sources, str | os.PathLike | RagDocument)
    listed = [sources] if single else list(sources)
    paths = [Path(source) for source in listed if not isinstance(source, RagDocument)]
    return paths, [source for source in listed if isinstance(source, RagDocument)]


def local_paths(paths: LocalPath | Iterable[LocalPath]) -> list[Path]:
    return [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]


def retrieval_query(
    query: str,
    *,
    namespace: str | None,
    top_k: int,
    domains: Sequence[str],
    source_prefix: str | None,
    section: str | None,
    threshold: float = 0.0,
    options: RetrievalOptions | None = None,
) -> RetrievalQuery:
    """The checked request of a retrieval, and of the context ``ask`` answers from."""
    from retrieval.adapters.files.local_sources import source_or_none
    from retrieval.domain.models import RetrievalQuery

    return RetrievalQuery.checked(
        query,
        domains,
        top_k,
        threshold,
        namespace,
        options,
        source_prefix=source_or_none(source_prefix),
        section=section,
    )

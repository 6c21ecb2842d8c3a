"""One API over the knowledge base, whichever door reaches it.

``KnowledgeBase`` (``retrieval.connect()``: the stores in this process) and ``RetrievalClient``
(``retrieval.grpc``: a ``retrieval serve`` over gRPC) both satisfy ``KnowledgeBaseApi``: the
same methods, arguments, defaults and result types, so code written against one runs against
the other. The client adds ``timeout=`` (seconds) to each call. ``SyncKnowledgeBase``
(``retrieval.sync_facade``) runs either from code without an event loop.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from retrieval.adapters.files.local_sources import source_or_none
from retrieval.domain.models import RagDocument, RetrievalQuery, validated

if TYPE_CHECKING:
    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import RetrievalResult
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import IngestReport, PathSync
    from retrieval.service.ingestion.outcomes import DeleteReport
    from retrieval.service.stats import CollectionStats

LocalPath = str | os.PathLike[str]
Sources = LocalPath | RagDocument | Iterable[LocalPath | RagDocument]
"""What ``ingest`` takes: files and folders (read as ``retrieval ingest`` reads them), and
``RagDocument``s, one or many."""


@runtime_checkable
class KnowledgeBaseApi(Protocol):
    """The knowledge base as Python callers use it: documents in, typed results out. Every
    method takes the namespace as ``namespace=`` (None: the service's default), and paths
    given as ``source_prefix`` are read from the working directory, as sources are stored."""

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
        """The ``top_k`` chunks that best answer ``query``, best first, each with its score per
        source (``scores``); ``threshold`` drops matches under that cosine similarity.
        ``domains``: only these (none: every domain); ``source_prefix``: only documents from
        this path or URL or below it; ``section``: only chunks of exactly this section;
        ``options``: ``RetrievalOptions`` fields (``mode="keyword"``, ``max_per_document=1``),
        each one unset taking its ``RETRIEVAL_SEARCH_*`` setting."""
        ...

    async def ingest(
        self,
        sources: Sources,
        *,
        namespace: str | None = None,
        domain: str | None = None,
        replace: bool = False,
    ) -> IngestReport:
        """Write the documents of these files and folders and these ``RagDocument``s; an
        unchanged document writes nothing. A file that cannot be read, or a document the
        service refuses, fails alone (``failures``). ``domain`` is that of every document read
        that sets none; ``replace`` lets a file take a document id another source holds."""
        ...

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
        ...

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
        ...

    async def documents(
        self, *, namespace: str | None = None, source_prefix: str | None = None
    ) -> list[DocumentSummary]:
        """The namespace's documents by id; only those from under ``source_prefix`` if given."""
        ...

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
        """The configured language model's answer (``RETRIEVAL_LLM_*``) from the ``top_k``
        chunks retrieved for ``question``, citing the ones it used (``citations``)."""
        ...

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
        """``ask``, as the model writes the answer: an ``AnswerDelta`` for each piece of its
        text, then one ``AnswerDone`` with the whole ``Answer`` and its citations. A malformed
        request is refused here; anything else is raised while iterating. Closing the generator
        (``contextlib.aclosing``, cancelling the task iterating it) stops the model."""
        ...

    async def stats(self) -> CollectionStats:
        """Vectors, chunk texts and orphans per namespace, store sizes, the health status."""
        ...


def split_sources(sources: Sources) -> tuple[list[Path], list[RagDocument]]:
    """The paths and the documents among ``sources``, each in the order given."""
    single = isinstance(sources, str | os.PathLike | RagDocument)
    listed = [sources] if single else list(sources)
    paths = [Path(source) for source in listed if not isinstance(source, RagDocument)]
    return paths, [source for source in listed if isinstance(source, RagDocument)]


def local_paths(paths: LocalPath | Iterable[LocalPath]) -> list[Path]:
    return [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]


def question_query(
    question: str,
    *,
    namespace: str | None,
    top_k: int,
    domains: Sequence[str],
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

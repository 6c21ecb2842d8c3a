"""Documents in, searchable chunks out: each request cut into chunks once, checked, then
written group by group (``retrieval.service.ingestion.group_write``). A request is refused
whole when one document is bad, or, when the caller asks for ``refused_as_outcomes``, each bad
document is a ``FAILED`` outcome of its own and the others are written. After a failure,
a crash or a cancellation, the stores hold the previous version of every document or a state
the next run repairs. See ``docs/ingestion.md``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from retrieval.batching import slices
from retrieval.domain.metadata import model_signature
from retrieval.domain.models import RagChunk, RagDocument, namespace_or_default
from retrieval.errors import InvalidRequestError
from retrieval.ports import Embedder
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.embedder import Matrix
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.delegating_embedder import DelegatingEmbedder
from retrieval.service.ingestion.chunking import (
    ChunkingPolicy,
    Prepared,
    passages_to_embed,
    whole,
)
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.document_checks import (
    check_document,
    check_request,
    check_unique,
)
from retrieval.service.ingestion.file_identity import identified
from retrieval.service.ingestion.group_write import GroupCall, GroupWriter
from retrieval.service.ingestion.outcomes import DocumentOutcome, refusal_outcome
from retrieval.service.ingestion.progress import EmbeddedTally, IngestProgress, Progress
from retrieval.service.timing import StageClock


class PassageEmbedder(Protocol):
    """What callers bringing their own vectors need: the passage side of the service's model."""

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    async def embed_passages(self, texts: Sequence[str]) -> Matrix: ...


@dataclass(frozen=True)
class Screened:
    """A request's documents the checks accepted, and the ``FAILED`` outcome of each document
    they refused, by its position in the request."""

    accepted: list[Prepared]
    refused: dict[int, DocumentOutcome]

    def in_order(self, written: Sequence[DocumentOutcome]) -> list[DocumentOutcome]:
        """The outcomes of the whole request in its order, ``written`` being those of
        ``accepted``."""
        rest = iter(written)
        return [
            self.refused[position] if position in self.refused else next(rest)
            for position in range(len(self.accepted) + len(self.refused))
        ]

    @property
    def refused_sources(self) -> set[str]:
        return {o.source for o in self.refused.values() if o.source is not None}


class IngestionService(DelegatingEmbedder):
    """The writer: documents cut, checked and written; every write of chunks goes through it.
    As an ``Embedder`` it makes vectors as ingestion makes them (cache included), for callers
    that store them later with ``ingest_embedded``."""

    def __init__(
        self,
        embedder: Embedder,
        stores: ChunkStores,
        ledger: DocumentLedger,
        generations: NamespaceGenerations,
        allowed_domains: Collection[str],
        default_namespace: str,
        policy: ChunkingPolicy,
        documents_per_write: int = 16,
        embedded_per_write: int = 500,
        lease_wait_s: float = 30.0,
        lease_renew_s: float = 30.0,
    ) -> None:
        super().__init__(embedder)
        self._ledger = ledger
        self._writer = GroupWriter(
            embedder, stores, ledger, generations, lease_wait_s, lease_renew_s
        )
        self._allowed_domains = frozenset(allowed_domains)
        self._default_namespace = default_namespace
        self._policy = policy
        self._documents_per_write = documents_per_write
        self._embedded_per_write = embedded_per_write
        self._signature = model_signature(embedder.model, embedder.dimension)

    def split(self, document: RagDocument, namespace: str) -> list[RagChunk]:
        return self._policy.split(document, namespace, self._embedder.model)

    def prepare(self, documents: Sequence[RagDocument], namespace: str) -> list[Prepared]:
        """The documents cut into chunks: what the checks and the write of them share."""
        return [Prepared(document, self.split(document, namespace)) for document in documents]

    async def identify(
        self, documents: Sequence[RagDocument], namespace: str, *, replace: bool
    ) -> list[RagDocument]:
        """The documents with the ids their files keep in the namespace
        (``retrieval.service.ingestion.file_identity``)."""
        return await identified(self._ledger, documents, namespace, replace=replace)

    def namespace(self, namespace: str | None) -> str:
        return namespace_or_default(namespace, self._default_namespace)

    def refusal(self, item: Prepared) -> InvalidRequestError | None:
        """Why ``ingest`` would refuse this document, or None."""
        try:
            check_document(
                item.document,
                item.chunks,
                allowed_domains=self._allowed_domains,
                signature=self._signature,
            )
        except InvalidRequestError as error:
            return error
        return None

    def check(self, document: RagDocument, namespace: str | None = None) -> None:
        """Raise ``InvalidRequestError`` if ``ingest`` would refuse this document."""
        refused = self.refusal(self.prepare([document], self.namespace(namespace))[0])
        if refused is not None:
            raise refused

    def check_request(self, prepared: Sequence[Prepared]) -> None:
        """Raise ``InvalidRequestError`` naming the first bad document of the request."""
        check_request(
            [item.document for item in prepared],
            [item.chunks for item in prepared],
            allowed_domains=self._allowed_domains,
            signature=self._signature,
        )

    def screen(self, prepared: Sequence[Prepared], refused_as_outcomes: bool) -> Screened:
        """The documents to write. Unless ``refused_as_outcomes``, one bad document raises
        ``InvalidRequestError`` naming it; with it, each bad document is set aside as a
        ``FAILED`` outcome with its reason and field. An id given twice refuses the request
        either way."""
        if not refused_as_outcomes:
            self.check_request(prepared)
            return Screened(list(prepared), {})
        check_unique([item.document for item in prepared])
        accepted: list[Prepared] = []
        refused: dict[int, DocumentOutcome] = {}
        for position, item in enumerate(prepared):
            error = self.refusal(item)
            if error is None:
                accepted.append(item)
            else:
                refused[position] = refusal_outcome(item.document_id, error, item.source)
        return Screened(accepted, refused)

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str | None = None,
        on_progress: Progress | None = None,
        *,
        replace: bool = False,
        refused_as_outcomes: bool = False,
    ) -> list[DocumentOutcome]:
        """Chunk, embed and store documents; unchanged ones cost one lookup and write nothing.
        One outcome per document, in order.

        The request is checked first: one bad document raises ``InvalidRequestError`` naming
        it and its field, and nothing is written; with ``refused_as_outcomes`` it is a
        ``FAILED`` outcome with that reason and field (``DocumentOutcome.refused``) and the
        others are written. After that, each document succeeds or fails on its own
        (``Outcome.FAILED`` with the reason). A document read from a file that set no id
        keeps the id the namespace holds the file under (``identify``). A document whose id
        is held by a document from another source fails with ``DocumentIdClashError`` naming
        both, unless ``replace``.
        """
        target = self.namespace(namespace)
        documents = await self.identify(documents, target, replace=replace)
        screened = self.screen(self.prepare(documents, target), refused_as_outcomes)
        written = await self.write(screened.accepted, target, on_progress, replace=replace)
        return screened.in_order(written)

    async def ingest_embedded(
        self,
        documents: Sequence[RagDocument],
        vectors: Matrix,
        namespace: str | None = None,
        on_progress: Progress | None = None,
    ) -> list[DocumentOutcome]:
        """Store each document whole as one chunk with the passage vector the caller made
        with this service's model (e.g. a benchmark's shipped embeddings)."""
        target = self.namespace(namespace)
        if vectors.shape != (len(documents), self._embedder.dimension):
            raise InvalidRequestError(
                f"expected vectors of shape ({len(documents)}, {self._embedder.dimension}), "
                f"got {vectors.shape}",
                field="vectors",
            )
        prepared = [
            Prepared(
                document, whole(document, target, self._embedder.model), vectors[row : row + 1]
            )
            for row, document in enumerate(documents)
        ]
        self.check_request(prepared)
        return await self.write(prepared, target, on_progress, step=self._embedded_per_write)

    async def write(
        self,
        prepared: Sequence[Prepared],
        namespace: str,
        on_progress: Progress | None = None,
        *,
        replace: bool = False,
        step: int | None = None,
    ) -> list[DocumentOutcome]:
        """Write documents already prepared and checked, ``step`` (default: the documents per
        write) at a time; one outcome each, in order."""
        progress = IngestProgress.of(on_progress)
        to_embed = passages_to_embed(prepared)
        progress.to_embed(to_embed)
        outcomes: list[DocumentOutcome] = []
        for group in slices(prepared, step or self._documents_per_write):
            tally = EmbeddedTally(progress.embedded)
            call = GroupCall(namespace, replace, tally, StageClock())
            settled = await self._writer.write(group, call)
            if spared := passages_to_embed(group) - tally.chunks:
                to_embed -= spared
                progress.to_embed(to_embed)
            outcomes.extend(settled)
            progress.settled(settled)
        return outcomes

from __future__ import annotations

from collections.abc import Collection, Sequence

import structlog
from pydantic import ValidationError

from retrieval.domain.models import (
    RagChunk,
    RetrievalMatch,
    RetrievalQuery,
    RetrievalResult,
    StageTimings,
)
from retrieval.domain.vectors import QueryMatch
from retrieval.errors import BackendNotConfiguredError, InvalidRequestError
from retrieval.logging import correlation_scope
from retrieval.ports import ChunkRepository, Embedder, MetadataFilter, VectorIndex
from retrieval.service.timing import StageClock

log = structlog.get_logger("retrieval")


def invalid_request(error: ValidationError) -> InvalidRequestError:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return InvalidRequestError(first["msg"], field=field)


def check_domains(domains: Sequence[str], allowed: Collection[str]) -> None:
    unknown = sorted(set(domains) - set(allowed))
    if unknown:
        raise InvalidRequestError(
            f"unknown domain(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}",
            field="domains",
        )


def domain_filter(domains: Sequence[str]) -> MetadataFilter | None:
    return {"domain": {"$in": sorted(set(domains))}} if domains else None


class RetrievalService:
    """Finds the chunks that best answer a question, best first."""

    def __init__(
        self,
        embedder: Embedder,
        index: VectorIndex,
        chunks: ChunkRepository,
        allowed_domains: Collection[str],
        default_namespace: str,
    ) -> None:
        self._embedder = embedder
        self._index = index
        self._chunks = chunks
        self._allowed_domains = frozenset(allowed_domains)
        self._default_namespace = default_namespace

    async def retrieve(
        self,
        query: str,
        domains: Sequence[str] = (),
        top_k: int = 5,
        confidence_threshold: float = 0.0,
        namespace: str | None = None,
    ) -> RetrievalResult:
        """Embed ``query`` as a query, search ``domains`` in ``namespace``, return texts by score.

        Raises ``InvalidRequestError`` for bad input, ``NotFoundError`` for a missing index or
        namespace, ``BackendError`` when a store fails. A blank query, or a backend without
        settings, gives an empty result.
        """
        try:
            request = RetrievalQuery(
                query=query,
                domains=tuple(domains),
                top_k=top_k,
                confidence_threshold=confidence_threshold,
                namespace=namespace or self._default_namespace,
            )
        except ValidationError as error:
            raise invalid_request(error) from error
        check_domains(request.domains, self._allowed_domains)
        with correlation_scope():
            return await self._retrieve(request)

    async def _retrieve(self, request: RetrievalQuery) -> RetrievalResult:
        clock = StageClock()
        if request.is_blank:
            log.info("retrieve.blank_query", namespace=request.namespace)
            return self._result(request, [], clock)
        try:
            with clock.stage("embed"):
                vector = await self._embedder.embed_query(request.query)
            with clock.stage("search"):
                found = await self._index.query(
                    vector.tolist(),
                    top_k=request.top_k,
                    namespace=request.namespace,
                    filter=domain_filter(request.domains),
                )
            kept = [match for match in found if match.score >= request.confidence_threshold]
            with clock.stage("fetch"):
                texts = await self._chunks.get_many([m.id for m in kept], request.namespace)
        except BackendNotConfiguredError as error:
            log.warning("retrieve.backend_not_configured", reason=str(error))
            return self._result(request, [], clock)
        matches = self._join(kept, texts, request.namespace)
        result = self._result(request, matches, clock)
        log.info(
            "retrieve.done",
            namespace=request.namespace,
            domains=list(request.domains),
            top_k=request.top_k,
            matches_before_threshold=len(found),
            matches_after_threshold=len(kept),
            returned=result.total_matches,
            **result.timings.model_dump(),
        )
        return result

    @staticmethod
    def _join(
        found: Sequence[QueryMatch], texts: dict[str, RagChunk], namespace: str
    ) -> list[RetrievalMatch]:
        matches = []
        for match in found:
            chunk = texts.get(match.id)
            if chunk is None:
                log.warning("retrieve.chunk_missing", chunk_id=match.id, namespace=namespace)
                continue
            matches.append(
                RetrievalMatch(
                    chunk_id=chunk.chunk_id,
                    content=chunk.content,
                    score=match.score,
                    document_id=chunk.document_id,
                    title=chunk.title,
                    domain=chunk.domain,
                    metadata=chunk.metadata,
                )
            )
        return matches

    @staticmethod
    def _result(
        request: RetrievalQuery, matches: list[RetrievalMatch], clock: StageClock
    ) -> RetrievalResult:
        timings = StageTimings(
            embed_ms=clock.stages.get("embed", 0.0),
            search_ms=clock.stages.get("search", 0.0),
            fetch_ms=clock.stages.get("fetch", 0.0),
            total_ms=clock.elapsed_ms(),
        )
        return RetrievalResult(
            matches=tuple(matches),
            query=request.query,
            namespace=request.namespace,
            total_matches=len(matches),
            timings=timings,
        )

from __future__ import annotations

import structlog

from retrieval.domain.chunk_identity import query_filter, vector_metadata
from retrieval.domain.filters import matches as matches_filter
from retrieval.domain.metadata import copied
from retrieval.domain.models import FETCH_STAGE, RagChunk, RetrievalMatch
from retrieval.ports import ChunkRepository
from retrieval.service.current_versions import CurrentVersions
from retrieval.service.pipeline.stage import PipelineState, with_texts

log = structlog.get_logger("retrieval")


class Hydrate:
    """Fetches every candidate's text (those an earlier stage has not) in one ``get_many``.
    A chunk without text, of a version just replaced, shows its document's current version
    in its place (``retrieval.service.current_versions``), once, and if the query's filter
    still holds it; any other is skipped."""

    name = FETCH_STAGE

    def __init__(self, chunks: ChunkRepository, versions: CurrentVersions) -> None:
        self._chunks = chunks
        self._versions = versions

    async def run(self, state: PipelineState) -> PipelineState:
        namespace = state.namespace
        texts = await with_texts(state, state.candidates, self._chunks)
        missing = [c.chunk_id for c in state.candidates if c.chunk_id not in texts]
        if missing:
            texts = {**await self._current(missing, state), **texts}
        matches = []
        shown: set[str] = set()
        for candidate in state.candidates:
            chunk = texts.get(candidate.chunk_id)
            if chunk is None:
                log.warning(
                    "retrieve.chunk_missing", chunk_id=candidate.chunk_id, namespace=namespace
                )
                continue
            if chunk.chunk_id in shown:
                continue
            shown.add(chunk.chunk_id)
            # Every field comes from a validated chunk or from the ranking: not validated again.
            matches.append(
                RetrievalMatch.model_construct(
                    chunk_id=chunk.chunk_id,
                    content=chunk.content,
                    score=candidate.score,
                    scores=dict(candidate.scores),
                    document_id=chunk.document_id,
                    title=chunk.title,
                    domain=chunk.domain,
                    metadata=copied(chunk.metadata),
                    source=chunk.source,
                    file_type=chunk.file_type,
                    section=chunk.section,
                    pages=chunk.pages,
                )
            )
        return state.updated(matches=tuple(matches))

    async def _current(self, missing: list[str], state: PipelineState) -> dict[str, RagChunk]:
        standing_in = await self._versions.standing_in(missing, state.namespace)
        wanted = query_filter(state.query)
        return {
            chunk_id: chunk
            for chunk_id, chunk in standing_in.items()
            if matches_filter(wanted, vector_metadata(chunk))
        }

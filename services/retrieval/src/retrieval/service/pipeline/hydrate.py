from __future__ import annotations

import structlog

from retrieval.domain.metadata import copied
from retrieval.domain.models import FETCH_STAGE, RetrievalMatch
from retrieval.ports import ChunkRepository
from retrieval.service.pipeline.stage import PipelineState, with_texts

log = structlog.get_logger("retrieval")


class Hydrate:
    """Fetches every candidate's text (those an earlier stage has not) in one ``get_many``; a
    chunk without text is skipped."""

    name = FETCH_STAGE

    def __init__(self, chunks: ChunkRepository) -> None:
        self._chunks = chunks

    async def run(self, state: PipelineState) -> PipelineState:
        namespace = state.namespace
        texts = await with_texts(state, state.candidates, self._chunks)
        matches = []
        for candidate in state.candidates:
            chunk = texts.get(candidate.chunk_id)
            if chunk is None:
                log.warning(
                    "retrieve.chunk_missing", chunk_id=candidate.chunk_id, namespace=namespace
                )
                continue
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

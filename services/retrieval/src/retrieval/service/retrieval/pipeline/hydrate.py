from __future__ import annotations

from dataclasses import dataclass

import structlog

from retrieval.domain.metadata import copied
from retrieval.domain.models import RetrievalMatch
from retrieval.domain.stage_names import StageName
from retrieval.service.retrieval.pipeline.stage import PipelineState
from retrieval.service.retrieval.pipeline.texts import CandidateTexts

log = structlog.get_logger("retrieval")


@dataclass(frozen=True, eq=False)
class Hydrate:
    """Fetches every candidate's text (those an earlier stage has not) in one ``get_many``.
    A chunk without text, of a version just replaced, shows its document's current version
    in its place (``CandidateTexts``), once; any other is skipped."""

    name = StageName.FETCH

    texts: CandidateTexts

    async def run(self, state: PipelineState) -> PipelineState:
        namespace = state.namespace
        texts = await self.texts.of(state, state.candidates)
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

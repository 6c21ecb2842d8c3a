"""The second hop of a multi-hop question: from the best candidates to the documents about the
names they mention.

A question such as "What position was held by the woman who starred in Kiss and Tell?"
needs a paragraph it shares no words with (Shirley Temple's), reached through a name the
first paragraph found (Kiss and Tell's) mentions.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import structlog

from retrieval.domain.chunk_identity import document_of, query_filter
from retrieval.domain.graph import GraphRecord, without_title
from retrieval.domain.models import RagChunk
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.links import follow_links
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.ports.graph_store import GraphStore
from retrieval.service.retrieval.pipeline.stage import PipelineState
from retrieval.service.retrieval.pipeline.texts import CandidateTexts

log = structlog.get_logger("retrieval")

NAMES_SEARCHED = "second_hop_names"
LINKS_FOUND = "second_hop_links"


class SecondHop:
    """Follows the names the best ``sources`` candidates mention to the documents about them.

    The names of each source's text (its title heading aside) that the query does not name,
    ``names_per_source`` at most, are looked up in the knowledge graph in one read: the
    chunks about them (their document's title names them: ``Kiss and Tell (1945 film)``,
    ``Newark, New Jersey``), in the query's namespace and filter. Of the documents a source
    leads to (the sources' own aside), those the searches ranked come first, best first,
    then the others in the order the source mentions them; one chunk each. The first
    ``links_per_source`` come right after their source in the ranking with a discounted
    score (``follow_links``), kept in its ``scores`` under the stage's name; a chunk ranked
    higher already stays where it is.

    Costs a ``get_many`` of the sources' texts (kept for the later stages) and one graph
    lookup. When the graph store fails, the ranking stays as it was, with ``second_hop`` in
    ``degraded``.
    """

    name = StageName.SECOND_HOP

    def __init__(
        self,
        graph: GraphStore,
        entities: EntityExtractor,
        texts: CandidateTexts,
        *,
        sources: int = 3,
        names_per_source: int = 24,
        links_per_source: int = 2,
    ) -> None:
        self._graph = graph
        self._entities = entities
        self._texts = texts
        self._sources = sources
        self._names_per_source = names_per_source
        self._links_per_source = links_per_source

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.second_hop or not state.candidates:
            return state
        leading = state.candidates[: self._sources]
        texts = await self._texts.of(state, leading)
        sources = [texts[c.chunk_id] for c in leading if c.chunk_id in texts]
        names = await self._names(sources, name_key(state.text))
        searched = list(dict.fromkeys(name for found in names.values() for name in found))
        try:
            about = await self._graph.about(
                searched, namespace=state.namespace, filter=query_filter(state.query)
            )
        except (BackendError, BackendNotConfiguredError) as error:
            log.warning("retrieve.second_hop_failed", error=str(error))
            return state.updated(chunks=texts, degraded=(*state.degraded, StageName.SECOND_HOP))
        standing = {c.chunk_id: position for position, c in enumerate(state.candidates)}
        leaders = {document_of(c.chunk_id) for c in leading}
        links = {
            source: linked(found, about, standing, leaders)[: self._links_per_source]
            for source, found in names.items()
        }
        return state.updated(
            candidates=tuple(follow_links(state.candidates, links, StageName.SECOND_HOP)),
            chunks=texts,
            counts={
                **state.counts,
                NAMES_SEARCHED: len(searched),
                LINKS_FOUND: sum(map(len, links.values())),
            },
        )

    async def _names(self, sources: Sequence[RagChunk], query: str) -> dict[str, list[str]]:
        """The keys of the names each source's text mentions that the query does not, by
        chunk id."""
        mentioned = await asyncio.gather(
            *(self._entities.extract(without_title(chunk)) for chunk in sources)
        )
        return {
            chunk.chunk_id: list(
                dict.fromkeys(name_key(name) for name in found if not names_in(query, name))
            )[: self._names_per_source]
            for chunk, found in zip(sources, mentioned, strict=True)
        }


def linked(
    names: Sequence[str],
    about: Sequence[GraphRecord],
    standing: dict[str, int],
    leaders: set[str],
) -> list[str]:
    """One chunk of each document about one of ``names`` but the ``leaders`` (the sources,
    already on top): the documents the searches ranked (by ``standing``, their best chunk)
    before those they did not (in the order of ``names``, their first chunk by id)."""
    order = {name: position for position, name in enumerate(names)}
    best: dict[str, tuple[float, int, str]] = {}
    for record in about:
        document = document_of(record.id)
        mentioned = [order[entity] for entity in record.about if entity in order]
        if not mentioned or document in leaders:
            continue
        rank = (standing.get(record.id, math.inf), min(mentioned), record.id)
        best[document] = min(best.get(document, rank), rank)
    return [chunk_id for _, _, chunk_id in sorted(best.values())]

"""The second hop of a multi-hop question: from the best candidates to the documents about the
names they mention.

A question such as "What position was held by the woman who starred in Kiss and Tell?"
needs a paragraph it shares no words with (Shirley Temple's), reached through a name the
first paragraph found (Kiss and Tell's) mentions.
"""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from retrieval.domain.chunk_identity import query_filter
from retrieval.domain.graph import GraphRecord
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.links import follow_links
from retrieval.errors import BackendError, BackendNotConfiguredError
from retrieval.ports.graph_store import GraphStore
from retrieval.service.pipeline.stage import PipelineState

log = structlog.get_logger("retrieval")

SECOND_HOP_STAGE = "second_hop"
SECOND_HOP = "second_hop"
"""The key of a linked chunk's score in its ``scores``."""
NAMES_SEARCHED = "second_hop_names"
LINKS_FOUND = "second_hop_links"


class SecondHop:
    """Follows the names the best ``sources`` candidates mention to the documents about them.

    The names come from the candidates' graph records (found by the entity extractor when
    the chunks were written), the first ``names_per_source`` of each that the query does not
    name; the chunks about them (their document's title names them, a parenthesised qualifier
    aside: ``Kiss and Tell (1945 film)``) are read in one lookup, in the query's namespace and
    filter, and the first chunk of each such document is a link. The first
    ``links_per_source`` links of each source, in the order it mentions them, come right
    after it in the ranking with a discounted score (``follow_links``); a chunk ranked higher
    already stays where it is.

    Costs two graph lookups (the sources' records, then the chunks about their names). When
    the graph store fails, the ranking stays as it was, with ``second_hop`` in ``degraded``.
    """

    name = SECOND_HOP_STAGE

    def __init__(
        self,
        graph: GraphStore,
        *,
        sources: int = 3,
        names_per_source: int = 8,
        links_per_source: int = 2,
    ) -> None:
        self._graph = graph
        self._sources = sources
        self._names_per_source = names_per_source
        self._links_per_source = links_per_source

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.second_hop or not state.candidates:
            return state
        leading = [c.chunk_id for c in state.candidates[: self._sources]]
        try:
            records = await self._graph.get_many(leading, state.namespace)
            names = self._names(leading, records, name_key(state.text))
            searched = list(dict.fromkeys(name for found in names.values() for name in found))
            about = await self._graph.about(
                searched, namespace=state.namespace, filter=query_filter(state.query)
            )
        except (BackendError, BackendNotConfiguredError) as error:
            log.warning("retrieve.second_hop_failed", error=str(error))
            return state.updated(degraded=(*state.degraded, SECOND_HOP))
        first: dict[str, str] = {}
        for record in about:
            for entity in record.about:
                first.setdefault(entity, record.id)
        links = {
            source: list(
                dict.fromkeys(first[n] for n in found if n in first and first[n] != source)
            )[: self._links_per_source]
            for source, found in names.items()
        }
        return state.updated(
            candidates=tuple(follow_links(state.candidates, links, SECOND_HOP)),
            counts={
                **state.counts,
                NAMES_SEARCHED: len(searched),
                LINKS_FOUND: sum(map(len, links.values())),
            },
        )

    def _names(
        self, leading: Sequence[str], records: dict[str, GraphRecord], query: str
    ) -> dict[str, list[str]]:
        """The entities each source mentions that the query does not name, by chunk id."""
        return {
            source: [e for e in records[source].mentions if not names_in(query, e)][
                : self._names_per_source
            ]
            for source in leading
            if source in records
        }

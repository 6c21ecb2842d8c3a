"""The second hop of a multi-hop question: from the best candidates to the documents about the
names they mention.

A question such as "What position was held by the woman who starred in Kiss and Tell?"
needs a paragraph it shares no words with (Shirley Temple's), reached through a name the
first paragraph found (Kiss and Tell's) mentions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

import structlog

from retrieval.domain.chunk_identity import document_of, query_filter
from retrieval.domain.graph import GraphRecord
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.links import follow_links
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendError, BackendNotConfiguredError
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.stage import PipelineState

log = structlog.get_logger("retrieval")

NAMES_SEARCHED = "second_hop_names"
LINKS_FOUND = "second_hop_links"


@dataclass(frozen=True, eq=False)
class SecondHop:
    """Follows the names the best ``sources`` candidates mention to the documents about them.

    The names each source mentions (its graph record's, written at ingestion: its text's
    names but its title's) that the query does not name, ``names_per_source`` at most, are
    looked up in the knowledge graph in one read: the chunks about them (their document's
    title names them: ``Kiss and Tell (1945 film)``, ``Newark, New Jersey``), in the query's
    namespace and filter. Of the documents a source leads to (the sources' own aside), those
    the searches ranked come first, best first, then the others in the order the source
    mentions them; one chunk each. The first ``links_per_source`` come right after their
    source in the ranking with a discounted score (``follow_links``), kept in its ``scores``
    under the stage's name; a chunk ranked higher already stays where it is.

    Reads no chunk text (the fetch reads them all at once): the candidates' graph records
    and the lookup come through ``GraphLeads``, which keeps them, so a question over chunks
    read before costs no round trip but the namespace generation's read (the result cache's,
    or one the calls under way share). The candidates' own records settle a source's links
    when at least ``links_per_source`` documents among the candidates (its own and the other
    sources' aside) are about the names it mentions: the lookup would rank those first, so
    it is made only for the names of the sources they do not settle. When the graph store
    fails, the ranking stays as it was, with ``second_hop`` in ``degraded``.
    """

    name = StageName.SECOND_HOP

    leads: GraphLeads
    _: KW_ONLY
    sources: int = 3
    names_per_source: int = 24
    links_per_source: int = 2

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.second_hop or not state.candidates:
            return state
        standing = {c.chunk_id: position for position, c in enumerate(state.candidates)}
        leading = [c.chunk_id for c in state.candidates[: self.sources]]
        leaders = {document_of(chunk_id) for chunk_id in leading}
        query = name_key(state.text)
        try:
            records = await self.leads.records(list(standing), state.namespace)
            names = {
                source: [name for name in records[source].mentions if not names_in(query, name)][
                    : self.names_per_source
                ]
                for source in leading
                if source in records
            }
            wanted = {name for found in names.values() for name in found}
            ranked = [r for r in records.values() if not wanted.isdisjoint(r.about)]
            links = {
                source: linked(found, ranked, standing, leaders) for source, found in names.items()
            }
            unsettled = [s for s, found in links.items() if len(found) < self.links_per_source]
            searched = list(dict.fromkeys(name for s in unsettled for name in names[s]))
            if searched:
                about = await self.leads.about(
                    searched, state.namespace, query_filter(state.query), began=state.began
                )
                links |= {s: linked(names[s], about, standing, leaders) for s in unsettled}
        except (BackendError, BackendNotConfiguredError) as error:
            log.warning("retrieve.second_hop_failed", error=str(error))
            return state.updated(degraded=(*state.degraded, StageName.SECOND_HOP))
        links = {source: found[: self.links_per_source] for source, found in links.items()}
        return state.updated(
            candidates=tuple(follow_links(state.candidates, links, StageName.SECOND_HOP)),
            counts={
                **state.counts,
                NAMES_SEARCHED: len(searched),
                LINKS_FOUND: sum(map(len, links.values())),
            },
        )


def linked(
    names: Sequence[str],
    about: Sequence[GraphRecord],
    standing: dict[str, int],
    leaders: set[str],
) -> list[str]:
    """One chunk of each document about one of ``names`` (by the records ``about``) but the
    ``leaders`` (the sources, already on top): the documents the searches ranked (by
    ``standing``, their best chunk) before those they did not (in the order of ``names``,
    their first chunk by id)."""
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

"""The graph channel of the hybrid search: from the entities a question names, through the
knowledge graph, to the chunks about them and to the chunks about what those mention.

Hop 1: the chunks about or mentioning each of the question's entities (``per_entity`` at
most each); an entity no chunk names gives way to those near it (``NearNames``: found through
the keyword index, one name's words holding the other's). A chunk scores, per entity, 1 when
it is about the entity (its document's title names it) and ``MENTION`` when it only mentions
it, divided by ``log2(1 + n)`` for an entity ``n`` chunks name, so a rare entity weighs more
than a common one.

Hop 2 (``hops`` 2): the ``sources`` best chunks of hop 1 lead to the chunks about the entities
they relate to the question's (a relation their text states, either direction: an LLM
extractor's) and then about those they mention, that the question does not name
(``names_per_source`` each), scored ``HOP`` times their source's score. The question "What
position was held by the woman who portrayed Corliss Archer in Kiss and Tell?" reaches Kiss
and Tell's paragraph at hop 1, Shirley Temple's at hop 2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from retrieval.domain.chunk_identity import query_filter
from retrieval.domain.graph import GraphRecord
from retrieval.domain.names import name_key
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.ports.graph_store import GraphStore
from retrieval.service.retrieval.pipeline.near_names import NearNames
from retrieval.service.retrieval.pipeline.stage import PipelineState

MENTION = 0.5
"""A chunk that mentions an entity, against one about it."""
HOP = 0.5
"""A chunk reached at hop 2, against the chunk that led to it."""


@dataclass(frozen=True, eq=False)
class GraphSearch:
    graph: GraphStore
    entities: EntityExtractor
    near: NearNames
    _: KW_ONLY
    per_entity: int = 20
    sources: int = 3
    names_per_source: int = 8

    async def ranked(self, state: PipelineState, depth: int) -> list[tuple[str, float]]:
        """Up to ``depth`` chunk ids with their graph scores, best first, ties by id."""
        named = [name_key(name) for name in await self.entities.extract(state.text)]
        entities = list(dict.fromkeys(key for key in named if key))
        if not entities:
            return []
        conditions = query_filter(state.query)
        first = await self._linked(entities, state)
        unmatched = [entity for entity in entities if not first[entity]]
        if unmatched:
            close = await self.near.of(unmatched, state)
            nearby = [
                e for e in dict.fromkeys(e for f in close.values() for e in f) if e not in first
            ]
            if nearby:
                first |= await self._linked(nearby, state)
                entities += nearby
        scores = first_hop(first)
        if state.plan.graph_hops > 1 and scores:
            leads = self._leads(scores, first, set(entities))
            wanted = list(dict.fromkeys(e for found in leads.values() for e in found))
            if wanted:
                about = await self.graph.about(wanted, namespace=state.namespace, filter=conditions)
                for chunk_id, score in reached_through(scores, leads, about).items():
                    scores[chunk_id] = max(scores.get(chunk_id, 0.0), score)
        return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:depth]

    async def _linked(
        self, entities: Sequence[str], state: PipelineState
    ) -> dict[str, list[GraphRecord]]:
        return await self.graph.linked(
            entities,
            namespace=state.namespace,
            per_entity=self.per_entity,
            filter=query_filter(state.query),
        )

    def _leads(
        self, scores: dict[str, float], first: dict[str, list[GraphRecord]], named: set[str]
    ) -> dict[str, list[str]]:
        """The entities each of the best ``sources`` chunks relates to the question's, then
        those it mentions, that the question does not name, ``names_per_source`` at most, by
        chunk id."""
        records = {record.id: record for found in first.values() for record in found}
        leading = sorted(scores, key=lambda i: (-scores[i], i))[: self.sources]
        return {
            source: [e for e in leads_of(records[source], named) if e not in named][
                : self.names_per_source
            ]
            for source in leading
        }


def leads_of(record: GraphRecord, named: set[str]) -> list[str]:
    """The entities ``record``'s relations join to one of ``named`` (either direction), then
    those it mentions, each once."""
    related = (
        r.target if r.source in named else r.source
        for r in record.relations
        if r.source in named or r.target in named
    )
    return list(dict.fromkeys((*related, *record.mentions)))


def reached_through(
    scores: dict[str, float], leads: dict[str, list[str]], about: Sequence[GraphRecord]
) -> dict[str, float]:
    """Each chunk about a lead's entity, at ``HOP`` times the best source leading to it."""
    return {
        record.id: HOP
        * max(scores[source] for source, found in leads.items() if set(found) & set(record.about))
        for record in about
    }


def first_hop(linked: dict[str, Sequence[GraphRecord]]) -> dict[str, float]:
    """Each chunk's score summed over the entities that led to it (see the module)."""
    scores: dict[str, float] = {}
    for entity, records in linked.items():
        rarity = 1.0 / math.log2(1 + len(records)) if records else 0.0
        for record in records:
            weight = 1.0 if entity in record.about else MENTION
            scores[record.id] = scores.get(record.id, 0.0) + weight * rarity
    return scores

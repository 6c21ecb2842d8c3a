"""What the second hop reads of the knowledge graph, kept per namespace until its next write.

The second hop needs the names its sources mention and the chunks about those names. Both
are in the graph (``GraphRecord.mentions``, written at ingestion by the extractor that reads
the chunks; ``GraphStore.about``), so the hop reads no chunk text and the fetch of the texts
stays one read. What was read is kept under the namespace's generation read last
(``RememberedGenerations``, read by every retrieval before it computes), so on every replica
nothing is served after a write completed, as for the result cache; without a generation
(no read yet, or the last failed) every lookup reads the store.

The records about an entity are kept unfiltered and filtered here, as the store filters the
records it read; a lookup that reached ``ABOUT_READ`` records is not kept, since which
entities lost records is unknown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from retrieval.domain.filters import evaluate, parse_filter
from retrieval.domain.graph import GraphRecord
from retrieval.ports.graph_store import ABOUT_READ, GraphStore
from retrieval.ports.vector_index import MetadataFilter
from retrieval.service.caching.remembered_generations import RememberedGenerations

KEPT_PER_NAMESPACE = 50_000
"""Chunks' mentions and entities' records kept per namespace, each; the first kept are
dropped first."""
KEPT_NAMESPACES = 64


class NamespaceLeads:
    """What was read of one namespace's graph under one generation."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        self.mentions: OrderedDict[str, tuple[str, ...]] = OrderedDict()
        self.about: OrderedDict[str, tuple[GraphRecord, ...]] = OrderedDict()


class GraphLeads:
    def __init__(
        self,
        graph: GraphStore,
        generations: RememberedGenerations,
        *,
        kept_per_namespace: int = KEPT_PER_NAMESPACE,
        kept_namespaces: int = KEPT_NAMESPACES,
    ) -> None:
        self._graph = graph
        self._generations = generations
        self._kept_per_namespace = kept_per_namespace
        self._kept_namespaces = kept_namespaces
        self._namespaces: OrderedDict[str, NamespaceLeads] = OrderedDict()

    async def mentions(self, ids: Sequence[str], namespace: str) -> dict[str, tuple[str, ...]]:
        """The names each chunk of ``ids`` mentions (name keys, first mention first, its
        title's aside); a chunk without a graph record is absent. At most one ``get_many`` of
        the graph, for the chunks not kept."""
        kept = self._kept(namespace)
        known = {i: kept.mentions[i] for i in ids if i in kept.mentions} if kept else {}
        missing = [chunk_id for chunk_id in ids if chunk_id not in known]
        read = await self._graph.get_many(missing, namespace) if missing else {}
        found = {chunk_id: record.mentions for chunk_id, record in read.items()}
        if kept:
            self._keep(kept.mentions, found)
        return known | found

    async def about(
        self, entities: Sequence[str], namespace: str, filter: MetadataFilter | None
    ) -> list[GraphRecord]:
        """As ``GraphStore.about``: the records about any of ``entities`` that pass
        ``filter``, by id; at most one lookup of the store, for the entities not kept."""
        kept = self._kept(namespace)
        if kept is None:
            return await self._graph.about(entities, namespace=namespace, filter=filter)
        expression = parse_filter(filter)
        wanted = list(dict.fromkeys(entities))
        known = {entity: kept.about[entity] for entity in wanted if entity in kept.about}
        missing = [entity for entity in wanted if entity not in known]
        if missing:
            found = await self._graph.about(missing, namespace=namespace)
            read = {entity: tuple(r for r in found if entity in r.about) for entity in missing}
            if len(found) < ABOUT_READ:
                self._keep(kept.about, read)
            known |= read
        records = {
            record.id: record
            for entity in wanted
            for record in known[entity]
            if evaluate(expression, record.metadata)
        }
        return [records[record_id] for record_id in sorted(records)]

    def _kept(self, namespace: str) -> NamespaceLeads | None:
        """What is kept of ``namespace`` under the generation read last; None without one."""
        generation = self._generations.last_read(namespace)
        if generation is None:
            self._namespaces.pop(namespace, None)
            return None
        kept = self._namespaces.get(namespace)
        if kept is None or kept.generation != generation:
            kept = self._namespaces[namespace] = NamespaceLeads(generation)
        self._namespaces.move_to_end(namespace)
        while len(self._namespaces) > self._kept_namespaces:
            self._namespaces.popitem(last=False)
        return kept

    def _keep(self, kept: OrderedDict, read: dict) -> None:
        kept.update(read)
        while len(kept) > self._kept_per_namespace:
            kept.popitem(last=False)

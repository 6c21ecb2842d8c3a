"""What the second hop reads of the knowledge graph, kept per namespace.

The second hop needs the graph records of its candidates (the names each mentions, the
entities each is about) and the chunks about the names its sources mention. Both are in the
graph (``GraphRecord``, written at ingestion by the extractor that reads the chunks;
``GraphStore.about``), so the hop reads no chunk text and the fetch of the texts stays one
read.

A chunk's record is what the extractor read in that chunk, which its id names (the id's
digest covers its text, title, domain and metadata): it is kept by id. The chunks about a
name change with every write, so they are kept under the namespace's generation read last
(``RememberedGenerations``), and a lookup is served from them only by a call that read a
generation since it began (the result cache's read, or ``read_since``'s, which calls under
way share where no result cache reads one): on every replica nothing is served after a write
completed, as for the result cache. When that read fails, the lookup reads the store. A new
generation drops both.

The records about an entity are kept unfiltered and filtered here, as the store filters the
records it read; a lookup that reached ``ABOUT_READ`` records is not kept, since which
entities lost records is unknown.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field

from retrieval.domain.filters import evaluate, parse_filter
from retrieval.domain.graph import GraphRecord
from retrieval.errors import RetrievalError
from retrieval.ports.graph_store import ABOUT_READ, GraphStore
from retrieval.ports.vector_index import MetadataFilter
from retrieval.service.caching.remembered_generations import RememberedGenerations

KEPT_PER_NAMESPACE = 50_000
"""Chunks' records and entities' records kept per namespace, each; the first kept are
dropped first."""
KEPT_NAMESPACES = 64


class NamespaceLeads:
    """What was read of one namespace's graph under one generation (None: no generation)."""

    def __init__(self, generation: int | None) -> None:
        self.generation = generation
        self.records: OrderedDict[str, GraphRecord] = OrderedDict()
        self.about: OrderedDict[str, tuple[GraphRecord, ...]] = OrderedDict()


@dataclass(frozen=True, eq=False)
class GraphLeads:
    graph: GraphStore
    generations: RememberedGenerations
    _: KW_ONLY
    kept_per_namespace: int = KEPT_PER_NAMESPACE
    kept_namespaces: int = KEPT_NAMESPACES
    _namespaces: OrderedDict[str, NamespaceLeads] = field(init=False, default_factory=OrderedDict)

    async def records(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        """The graph records of the chunks ``ids``, by id; a chunk without one is absent. At
        most one ``get_many`` of the graph, for the chunks not kept."""
        kept = self._kept(namespace)
        known = {i: kept.records[i] for i in ids if i in kept.records}
        missing = [chunk_id for chunk_id in ids if chunk_id not in known]
        if not missing:
            return known
        read = await self.graph.get_many(missing, namespace)
        self._keep(kept.records, read)
        return known | read

    async def about(
        self,
        entities: Sequence[str],
        namespace: str,
        filter: MetadataFilter | None,
        *,
        began: float,
    ) -> list[GraphRecord]:
        """As ``GraphStore.about``: the records about any of ``entities`` that pass
        ``filter``, by id, for a call that began at ``began`` (``RememberedGenerations``'
        clock); at most one lookup of the store, for the entities not kept."""
        try:
            generation: int | None = await self.generations.read_since(namespace, began)
        except RetrievalError:
            generation = None
        kept = self._kept(namespace)
        # kept under an older generation: a read sent before this call began answered after
        # one that failed
        if generation is None or kept.generation is None or kept.generation < generation:
            return await self.graph.about(entities, namespace=namespace, filter=filter)
        expression = parse_filter(filter)
        wanted = list(dict.fromkeys(entities))
        known = {entity: kept.about[entity] for entity in wanted if entity in kept.about}
        missing = [entity for entity in wanted if entity not in known]
        if missing:
            found = await self.graph.about(missing, namespace=namespace)
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

    def _kept(self, namespace: str) -> NamespaceLeads:
        """What is kept of ``namespace`` under the generation read last, or without one."""
        generation = self.generations.last_read(namespace)
        kept = self._namespaces.get(namespace)
        if kept is None or kept.generation != generation:
            kept = self._namespaces[namespace] = NamespaceLeads(generation)
        self._namespaces.move_to_end(namespace)
        while len(self._namespaces) > self.kept_namespaces:
            self._namespaces.popitem(last=False)
        return kept

    def _keep(self, kept: OrderedDict, read: dict) -> None:
        kept.update(read)
        while len(kept) > self.kept_per_namespace:
            kept.popitem(last=False)

"""The graph entries of chunks: the entities an extractor finds in each, in the graph store."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.batching import slices
from retrieval.domain.graph import graph_record, without_title
from retrieval.domain.models import RagChunk
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.ports.graph_store import GraphStore

EXTRACTED_PER_TURN = 16
"""Texts read between two turns of the event loop: the offline extractor works on the loop,
about 0.3 ms a paragraph, and a write's 500 chunks read at once held it 0.17 s while other
calls waited (25 ms now, the time to build the 500 records)."""


@dataclass(frozen=True)
class ChunkGraph:
    """A graph store and the extractor whose entities it links."""

    store: GraphStore
    entities: EntityExtractor

    async def add(self, chunks: Sequence[RagChunk], namespace: str) -> None:
        """The graph records of chunks whose texts are stored (the title heading aside: the
        chunk is about its title, it does not mention it)."""
        if not chunks:
            return
        names: list[list[str]] = []
        for batch in slices(chunks, EXTRACTED_PER_TURN):
            names += await asyncio.gather(*(self.entities.extract(without_title(c)) for c in batch))
            await asyncio.sleep(0)
        records = [graph_record(c, found) for c, found in zip(chunks, names, strict=True)]
        await self.store.upsert(records, namespace)

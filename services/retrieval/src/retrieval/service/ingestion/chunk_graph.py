"""The graph entries of chunks: the entities and relations an extractor finds in each, in the
graph store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass

from retrieval.batching import slices
from retrieval.domain.graph import (
    Extraction,
    GraphRecord,
    graph_record,
    record_version,
    without_title,
)
from retrieval.domain.models import RagChunk
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.ports.graph_store import GraphStore
from retrieval.ports.knowledge_extractor import KnowledgeExtractor

EXTRACTED_PER_TURN = 16
"""Texts read between two turns of the event loop: the offline extractor works on the loop,
about 0.3 ms a paragraph, and a write's 500 chunks read at once held it 0.17 s while other
calls waited (25 ms now, the time to build the 500 records). A chat model's calls are
bounded by its extractor (``LlmKnowledgeExtractor``'s ``concurrency``)."""


@dataclass(frozen=True)
class ChunkGraph:
    """A graph store, the extractor that reads the chunks written to it (``knowledge``), and
    the one that reads the names of questions (``entities``): the rule-based extractor even
    when ``knowledge`` is a chat model, so a retrieval never waits on one."""

    store: GraphStore
    entities: EntityExtractor
    knowledge: KnowledgeExtractor

    @property
    def version(self) -> str:
        """The version of the records written here (``record_version``): a repair makes the
        records of any other again."""
        return record_version(self.knowledge.version)

    def outdated_ids(self, namespace: str, prefix: str | None = None) -> AsyncIterator[list[str]]:
        return self.store.outdated_ids(namespace, self.version, prefix=prefix)

    async def add(
        self,
        chunks: Sequence[RagChunk],
        namespace: str,
        made: Mapping[str, GraphRecord] | None = None,
    ) -> None:
        """The graph records of chunks whose texts are stored (the title heading aside: the
        chunk is about its title, it does not mention it); those in ``made``, by chunk id,
        are written as they are."""
        if not chunks:
            return
        made = made or {}
        to_read = [c for c in chunks if c.chunk_id not in made]
        found: list[Extraction] = []
        for batch in slices(to_read, EXTRACTED_PER_TURN):
            found += await asyncio.gather(
                *(self.knowledge.extract(without_title(c)) for c in batch)
            )
            await asyncio.sleep(0)
        records = [
            *(made[c.chunk_id] for c in chunks if c.chunk_id in made),
            *(
                graph_record(c, stated, self.version)
                for c, stated in zip(to_read, found, strict=True)
            ),
        ]
        await self.store.upsert(records, namespace)

"""Near matches of the names a question gives that the knowledge graph does not hold: the
entities of the documents the keyword index finds for such a name, when one name's words hold
the other's ("Harrison Bryce Jordan Barnes" and ``harrison barnes``, "Belinda" and ``belinda
peregrin``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from retrieval.domain.chunk_identity import query_filter
from retrieval.domain.names import title_keys
from retrieval.ports import ChunkRepository, KeywordIndex
from retrieval.service.retrieval.pipeline.stage import PipelineState


def near(name: str, entity: str) -> bool:
    """Whether two name keys differ and the words of one hold all the other's."""
    words, others = set(name.split()), set(entity.split())
    return name != entity and (words <= others or others <= words)


@dataclass(frozen=True, eq=False)
class NearNames:
    keywords: KeywordIndex
    chunks: ChunkRepository
    _: KW_ONLY
    hits_per_name: int = 3

    async def of(self, names: Sequence[str], state: PipelineState) -> dict[str, list[str]]:
        """For each of ``names`` (name keys), the entities near it that title the documents of
        its ``hits_per_name`` best keyword matches, in the query's namespace and filter: one
        keyword search per name, all at once, and one ``get_many`` of the matches' titles."""
        found = await asyncio.gather(
            *(
                self.keywords.query(
                    name,
                    top_k=self.hits_per_name,
                    namespace=state.namespace,
                    filter=query_filter(state.query),
                )
                for name in names
            )
        )
        ids = list(dict.fromkeys(match.id for matches in found for match in matches))
        chunks = await self.chunks.get_many(ids, state.namespace) if ids else {}
        return {
            name: list(
                dict.fromkeys(
                    key
                    for match in matches
                    if match.id in chunks
                    for key in title_keys(chunks[match.id].title)
                    if near(name, key)
                )
            )
            for name, matches in zip(names, found, strict=True)
        }

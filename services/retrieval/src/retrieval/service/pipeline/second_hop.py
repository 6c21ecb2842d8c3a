"""The second hop of a multi-hop question: from the best candidates to the documents about the
names they mention.

A question such as "What position was held by the woman who starred in Kiss and Tell?"
needs a paragraph it shares no words with (Shirley Temple's), reached through a name the
first paragraph found (Kiss and Tell's) mentions.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from retrieval.domain.chunk_identity import query_filter
from retrieval.domain.graph import without_title
from retrieval.domain.keywords import KeywordMatch
from retrieval.domain.models import RagChunk
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.links import follow_links
from retrieval.errors import BackendError, BackendNotConfiguredError
from retrieval.ports import ChunkRepository, KeywordIndex
from retrieval.ports.entity_extractor import EntityExtractor
from retrieval.service.pipeline.stage import PipelineState, with_texts

log = structlog.get_logger("retrieval")

SECOND_HOP_STAGE = "second_hop"
SECOND_HOP = "second_hop"
"""The key of a linked chunk's score in its ``scores``."""
NAMES_SEARCHED = "second_hop_names"
LINKS_FOUND = "second_hop_links"


class SecondHop:
    """Follows the names the best ``sources`` candidates mention to the documents about them.

    From each source's text (its title heading aside), the first ``names_per_source`` names
    the query does not name are searched in the keyword index (``hits_per_name`` matches
    each, in the query's namespace and with its filter); a match whose document's title is
    that name (a parenthesised qualifier aside: ``Kiss and Tell (1945 film)``) is a link.
    The first ``links_per_source`` links of each source, in the order it mentions them, come
    right after it in the ranking with a discounted score (``follow_links``); a chunk ranked
    higher already stays where it is.

    Costs a ``get_many`` of the sources' texts (kept for the later stages), one keyword
    search per distinct name, all at once, and a ``get_many`` of the matches' texts. When the
    keyword index fails, the ranking stays as it was, with ``second_hop`` in ``degraded``.
    """

    name = SECOND_HOP_STAGE

    def __init__(
        self,
        entities: EntityExtractor,
        keywords: KeywordIndex,
        chunks: ChunkRepository,
        *,
        sources: int = 3,
        names_per_source: int = 8,
        hits_per_name: int = 3,
        links_per_source: int = 2,
    ) -> None:
        self._entities = entities
        self._keywords = keywords
        self._chunks = chunks
        self._sources = sources
        self._names_per_source = names_per_source
        self._hits_per_name = hits_per_name
        self._links_per_source = links_per_source

    async def run(self, state: PipelineState) -> PipelineState:
        if not state.plan.second_hop or not state.candidates:
            return state
        leading = state.candidates[: self._sources]
        texts = await with_texts(state, leading, self._chunks)
        sources = [texts[c.chunk_id] for c in leading if c.chunk_id in texts]
        names = await self._names(sources, name_key(state.text))
        searched = list(dict.fromkeys(name for found in names.values() for name in found))
        try:
            matches = await asyncio.gather(*(self._search(name, state) for name in searched))
        except (BackendError, BackendNotConfiguredError) as error:
            log.warning("retrieve.second_hop_failed", error=str(error))
            return state.updated(chunks=texts, degraded=(*state.degraded, SECOND_HOP))
        hits = dict(zip(searched, matches, strict=True))
        missing = list(dict.fromkeys(m.id for found in matches for m in found if m.id not in texts))
        if missing:
            texts = {**texts, **await self._chunks.get_many(missing, state.namespace)}
        links = {source: self._linked(source, names[source], hits, texts) for source in names}
        return state.updated(
            candidates=tuple(follow_links(state.candidates, links, SECOND_HOP)),
            chunks=texts,
            counts={
                **state.counts,
                NAMES_SEARCHED: len(searched),
                LINKS_FOUND: sum(map(len, links.values())),
            },
        )

    async def _names(self, sources: Sequence[RagChunk], query: str) -> dict[str, list[str]]:
        """The names each source's text mentions that the query does not, by chunk id."""
        mentioned = await asyncio.gather(
            *(self._entities.extract(without_title(chunk)) for chunk in sources)
        )
        return {
            chunk.chunk_id: [name for name in found if not names_in(query, name)][
                : self._names_per_source
            ]
            for chunk, found in zip(sources, mentioned, strict=True)
        }

    async def _search(self, name: str, state: PipelineState) -> list[KeywordMatch]:
        return await self._keywords.query(
            name,
            top_k=self._hits_per_name,
            namespace=state.namespace,
            filter=query_filter(state.query),
        )

    def _linked(
        self,
        source: str,
        names: Sequence[str],
        hits: dict[str, list[KeywordMatch]],
        texts: dict[str, RagChunk],
    ) -> list[str]:
        """The chunks about the names ``source`` mentions, in the order it mentions them."""
        linked = dict.fromkeys(
            match.id
            for name in names
            for match in hits[name]
            if match.id != source
            and match.id in texts
            and name_key(texts[match.id].title) == name_key(name)
        )
        return list(linked)[: self._links_per_source]

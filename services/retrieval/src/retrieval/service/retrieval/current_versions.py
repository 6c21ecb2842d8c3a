"""The current version of a document, standing in for a chunk of a version just replaced.

An index that shows writes late (Pinecone, for about its freshness delay) still returns the
chunks of a document's previous version for a while after a new one is committed, while the
chunk store already holds only the new one's texts. Rather than drop the document from the
answer until the index catches up, a retrieval shows the committed chunk at the same
position of its current version, with the score the old one earned. A document deleted, or
one whose new version has no chunk at that position, has none to show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from retrieval.domain.chunk_identity import document_of
from retrieval.domain.models import RagChunk
from retrieval.domain.neighbours import position_of
from retrieval.ports import ChunkRepository
from retrieval.ports.document_ledger import DocumentLedger


@dataclass(frozen=True, eq=False)
class CurrentVersions:
    ledger: DocumentLedger
    chunks: ChunkRepository

    async def standing_in(self, chunk_ids: Sequence[str], namespace: str) -> dict[str, RagChunk]:
        """For each of ``chunk_ids`` without a stored text, the chunk of its document's
        committed version at the same position, if there is one."""
        documents = sorted({document_of(chunk_id) for chunk_id in chunk_ids})
        records = await self.ledger.get_many(namespace, documents)
        wanted: dict[str, str] = {}
        for chunk_id in chunk_ids:
            record = records.get(document_of(chunk_id))
            position = position_of(chunk_id)
            current = [] if record is None else record.committed
            same = [c for c in current if c != chunk_id and position_of(c) == position]
            if same:
                wanted[chunk_id] = same[0]
        if not wanted:
            return {}
        found = await self.chunks.get_many(sorted(set(wanted.values())), namespace)
        return {old: found[new] for old, new in wanted.items() if new in found}

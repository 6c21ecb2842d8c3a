"""A brute-force KeywordIndex: BM25 written out plainly, the reference the bm25s index meets."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from retrieval.domain.filters import evaluate, parse_filter
from retrieval.domain.keyword_terms import terms
from retrieval.domain.keywords import KeywordMatch, KeywordRecord
from retrieval.domain.metadata import Metadata
from retrieval.errors import InvalidRequestError
from retrieval.ports.vector_index import MetadataFilter
from retrieval_testkit.namespaced_records import NamespacedRecords


def lucene_idf(documents: int, with_term: int) -> float:
    return math.log(1 + (documents - with_term + 0.5) / (with_term + 0.5))


Entry = tuple[Counter[str], int, Metadata]


class InMemoryKeywordIndex(NamespacedRecords[Entry]):
    """Lucene's BM25 over ``terms``: N, document frequencies and the average length count every
    record of the namespace, a filter only hides some of them, and a term repeated in the query
    counts each time (as in Lucene and bm25s)."""

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        super().__init__()
        self._k1, self._b = k1, b
        self.queries: list[str] = []

    async def upsert(self, records: Sequence[KeywordRecord], namespace: str) -> int:
        for record in records:
            found = terms(record.text)
            stored = (Counter(found), len(found), record.metadata)
            self._namespaces.setdefault(namespace, {})[record.id] = stored
        return len(records)

    async def query(
        self,
        text: str,
        *,
        top_k: int,
        namespace: str,
        filter: MetadataFilter | None = None,
    ) -> list[KeywordMatch]:
        self.queries.append(text)
        expression = parse_filter(filter)
        if top_k < 1:
            raise InvalidRequestError("top_k must be at least 1", field="top_k")
        records = self._namespaces.get(namespace, {})
        if not records:
            return []
        average_length = sum(length for _, length, _ in records.values()) / len(records)
        query = terms(text)
        idf = {
            term: lucene_idf(len(records), sum(term in counts for counts, _, _ in records.values()))
            for term in query
        }
        matches = []
        for record_id, (counts, length, metadata) in records.items():
            if not evaluate(expression, metadata):
                continue
            score = 0.0
            for term in query:
                if frequency := counts[term]:
                    norm = self._k1 * (1 - self._b + self._b * length / average_length)
                    score += idf[term] * frequency / (frequency + norm)
            if score > 0:
                matches.append(KeywordMatch(id=record_id, score=score))
        matches.sort(key=lambda match: (-match.score, match.id))
        return matches[:top_k]

"""The Reranker port on Pinecone Inference's rerank (default ``bge-reranker-v2-m3``).

What each model takes (``RERANK_LIMITS``), from Pinecone's "Rerank results" guide and its
``GET /models`` reference (``max_batch_size``, ``max_sequence_length``)::

    model                  documents  query tokens  tokens a pair          truncate
    bge-reranker-v2-m3     100        256           1,024 query + document END (default NONE)
    pinecone-rerank-v0     100        -             512 query + document   END (its default)
    cohere-rerank-3.5      200        -             40,000                 not a parameter
    cohere-rerank-4-fast   250        -             8,192 per document     not a parameter
    any other name         100        256           unknown                not sent

(The 256 query tokens of bge are from Pinecone's "Understanding inference" page.) SDK
10.2.0 calls ``pinecone-rerank-v0`` deprecated, most projects being refused it (403, so
``NotAuthorisedError``); Pinecone serves ``cohere-rerank-3.5`` with ``cohere-rerank-4-fast``
since 31 August 2026, whose scores differ. Any other name is sent as it is, within the
smallest limits of the table and with no parameters (a model may refuse one it does not
know), and a warning is logged when the adapter is made.

Passages: more than a model's ``documents`` go in consecutive calls of at most that many,
``concurrency`` calls at a time, each asking for its best ``min(top_n, size)``; the answers
are merged by score, ties by index. That is sound because a cross-encoder scores each
query-passage pair on its own, so one model's scores for one query are comparable across
calls. A passage past the model's token budget is cut at its end by Pinecone
(``truncate="END"``) rather than refused; the Cohere models cut long documents themselves.

Query: Pinecone documents no truncation of a query past the model's query cap, so such a
query is shortened here to its first ``query_tokens // TOKENS_PER_WORD`` words (runs of
non-space characters), 128 for bge. Two tokens a word is a generous bound for bge's
XLM-RoBERTa tokenizer (English text averages about 1.3); text written without spaces
(Chinese, Japanese) is not shortened this way, and Pinecone decides.

Errors translate as ``pinecone_errors`` says, except that a 404 (a model Pinecone does not
serve) and a 400 or 422 (a refused request) raise ``BackendError``: the query and passages
were valid, so the failure is the backend's. An answer whose indices are out of range,
repeated or fewer than asked for raises ``BackendError`` too. A call of n passages takes at
most ceil(ceil(n / documents) / concurrency) bounds of one SDK call. Pinecone limits rerank
requests a minute per model, hence the low default concurrency (a 429 is
``RateLimitedError``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field

import structlog
from pinecone import AsyncPinecone

from retrieval.adapters.per_loop import PerLoop
from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.adapters.pinecone.errors import bounded
from retrieval.batching import gather_bounded
from retrieval.domain.reranking import RerankedPassage
from retrieval.errors import BackendError, IndexNotFoundError, InvalidRequestError

log = structlog.get_logger("retrieval")

TOKENS_PER_WORD = 2
WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class RerankLimits:
    """What one rerank request of a model may carry."""

    documents: int
    query_tokens: int | None
    """``None``: Pinecone documents no cap on the query alone."""
    truncates: bool
    """Whether the model takes ``truncate`` (then sent as ``"END"``)."""


RERANK_LIMITS = {
    "bge-reranker-v2-m3": RerankLimits(documents=100, query_tokens=256, truncates=True),
    "pinecone-rerank-v0": RerankLimits(documents=100, query_tokens=None, truncates=True),
    "cohere-rerank-3.5": RerankLimits(documents=200, query_tokens=None, truncates=False),
    "cohere-rerank-4-fast": RerankLimits(documents=250, query_tokens=None, truncates=False),
}
UNKNOWN_MODEL_LIMITS = RerankLimits(documents=100, query_tokens=256, truncates=False)


def shortened(query: str, max_tokens: int | None) -> str:
    """``query`` cut after its ``max_tokens // TOKENS_PER_WORD``-th word, if it has more."""
    if max_tokens is None:
        return query
    words = list(WORD.finditer(query))
    keep = max_tokens // TOKENS_PER_WORD
    return query[: words[keep - 1].end()] if len(words) > keep else query


@dataclass(eq=False)
class PineconeReranker:
    connection: PineconeConnection
    _: KW_ONLY
    model: str = "bge-reranker-v2-m3"
    concurrency: int = 2
    _limits: RerankLimits = field(init=False)
    _clients: PerLoop[AsyncPinecone] = field(init=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._limits = RERANK_LIMITS.get(self.model, UNKNOWN_MODEL_LIMITS)
        if self.model not in RERANK_LIMITS:
            log.warning(
                "rerank.model_limits_unknown",
                model=self.model,
                documents_per_call=self._limits.documents,
                query_tokens=self._limits.query_tokens,
            )
        self._clients = PerLoop(self.connection.open_control, lambda client: client.close())

    async def close(self) -> None:
        """Release the connections of the running loop's client."""
        await self._clients.close()

    async def rerank(
        self, query: str, passages: Sequence[str], top_n: int
    ) -> list[RerankedPassage]:
        if not passages:
            return []
        if top_n < 1:
            raise InvalidRequestError("top_n must be at least 1", field="top_n")
        if not query.strip():
            raise InvalidRequestError("the query is blank", field="query")
        sent_query = shortened(query, self._limits.query_tokens)
        size = self._limits.documents
        answers = await gather_bounded(
            [
                lambda start=start: self._rerank(
                    sent_query, passages[start : start + size], top_n, start
                )
                for start in range(0, len(passages), size)
            ],
            self.concurrency,
        )
        merged = [passage for answer in answers for passage in answer]
        return sorted(merged, key=lambda passage: (-passage.score, passage.index))[:top_n]

    async def _rerank(
        self, query: str, passages: Sequence[str], top_n: int, offset: int
    ) -> list[RerankedPassage]:
        """The best ``top_n`` of one call, indexed from ``offset``."""
        what = f"Pinecone Inference rerank {self.model}"
        wanted = min(top_n, len(passages))
        client = self._clients.get()
        try:
            response = await bounded(
                lambda: client.inference.rerank(
                    model=self.model,
                    query=query,
                    documents=list(passages),
                    return_documents=False,
                    top_n=wanted,
                    parameters={"truncate": "END"} if self._limits.truncates else None,
                ),
                what=what,
                request_timeout=self.connection.request_timeout,
                call_timeout=self.connection.call_timeout,
            )
        except (IndexNotFoundError, InvalidRequestError) as error:
            raise BackendError(str(error)) from error
        indices = [item.index for item in response.data]
        in_range = all(0 <= index < len(passages) for index in indices)
        if not in_range or len(indices) != wanted or len(set(indices)) != wanted:
            raise BackendError(
                f"{what} answered indices {indices} for the best {wanted} of {len(passages)}"
            )
        return [
            RerankedPassage(index=offset + item.index, score=item.score) for item in response.data
        ]

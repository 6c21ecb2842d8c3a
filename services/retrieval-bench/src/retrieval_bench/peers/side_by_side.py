"""Our retrieval beside every configuration of LangChain, LlamaIndex and Haystack on one BEIR
dataset, same vectors.

Every judged query is embedded once, through the service's own query vector cache; those
vectors and the passage vectors are written for the peers' runner
(``retrieval_bench/peers/runner.py``), which serves each configuration of each library
(``CONFIGURATIONS`` there: every fusion mode the library offers) from a process of an
environment of its own (made from ``requirements.txt`` beside it, never the service's). Then
``run_beir`` asks every query once through ``RetrievalService`` with the default settings (the
timed call finds the query's vector in the cache) and, query by query, every peer too, the
order rotating from one query to the next as the ablation rotates its variants, so that a busy
machine slows every system alike. Every system is scored here with the same metrics: nDCG@10,
Recall@100, both@5 and both@10 (as ``bench beir`` scores them), and search latency p50/p95,
the query's embedding excluded. Each library is reported by its default configuration and by
its best (the highest nDCG@10), and ours is read against each library's best.
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

from retrieval.container import Container
from retrieval.domain.models import MAX_TOP_K, Frozen, RetrievalQuery, RetrievalResult
from retrieval.evaluation.ablation import DEFAULT_VARIANT, VARIANTS
from retrieval.evaluation.metrics import Qrels, Run, relevant_ids
from retrieval.evaluation.percentiles import summary
from retrieval.lifecycle import resolve, running
from retrieval.ports.embedder import Matrix
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.settings import Settings
from retrieval_bench.beir.data import BeirDataset
from retrieval_bench.beir.figures import ranking_figures
from retrieval_bench.beir.run import BeirReport, Progress, run_beir
from retrieval_bench.peers.process import PeerProcess, serving
from retrieval_bench.peers.runner import CONFIGURATIONS

RUNNER = Path(__file__).resolve().with_name("runner.py")
OURS = "ours"
BEST = "best"


def report_file(dataset: str) -> str:
    """The report of a dataset, named as ``bench beir`` names its own: ``peers-scifact.json``."""
    return f"peers-{dataset}.json"


class SystemFigures(Frozen):
    ndcg_at_10: float
    recall_at_100: float
    both_at_5: float = Field(description="Share of queries with every relevant document in 5.")
    both_at_10: float
    p50_ms: float = Field(description="Search wall-clock time, the query's embedding excluded.")
    p95_ms: float


class LibraryFigures(Frozen):
    """One library in every configuration it offers."""

    library: str = Field(description="The packages run and their versions.")
    default: str = Field(description="The configuration the library runs when none is chosen.")
    best: str = Field(description="The configuration of highest nDCG@10; the default on a tie.")
    configurations: dict[str, SystemFigures] = Field(description="Every one run, default first.")


class SideBySide(Frozen):
    dataset: str
    queries: int = Field(description="Judged queries asked.")
    documents: int
    several_relevant: bool = Field(
        description="Most judged queries have more than one relevant document, so both@5 and "
        "both@10 are shown beside nDCG@10 and Recall@100."
    )
    ours: SystemFigures = Field(description="Our default settings.")
    peers: dict[str, LibraryFigures]

    def best(self) -> dict[str, SystemFigures]:
        """Each library's figures in its best configuration."""
        return {name: peer.configurations[peer.best] for name, peer in self.peers.items()}

    def ratios(self, figure: str) -> dict[str, float]:
        """Our ``figure`` over each library's in its best configuration: nDCG@10 above 1 means
        we rank better, p95 below 1 that we answer faster."""
        ours = getattr(self.ours, figure)
        return {name: ours / getattr(best, figure) for name, best in self.best().items()}


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
    """The runner of every configuration of each peer library, with the peers' interpreter,
    over ``directory``, named ``library/configuration``, each library's default first."""
    runner = [str(python), str(RUNNER)]
    return {
        f"{system}/{configuration}": [*runner, system, configuration, str(directory)]
        for system, configurations in CONFIGURATIONS.items()
        for configuration in configurations
    }


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
        both_at_5=report.both_at_5,
        both_at_10=report.both_at_10,
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
    """One configuration scored as ``bench beir`` scores ours."""
    ranking = ranking_figures(ranked_run(peer.rankings), qrels)
    spread = summary(peer.latency_ms)
    return SystemFigures(
        ndcg_at_10=ranking.ndcg_at_10,
        recall_at_100=ranking.recall_at_100,
        both_at_5=ranking.both_at_5,
        both_at_10=ranking.both_at_10,
        p50_ms=spread["p50"],
        p95_ms=spread["p95"],
    )


def best_configuration(configurations: Mapping[str, SystemFigures]) -> str:
    """The configuration of highest nDCG@10, the first of those on a tie."""
    return max(configurations, key=lambda name: configurations[name].ndcg_at_10)


def library_figures(
    runs: Mapping[str, PeerRun], qrels: Mapping[str, Qrels]
) -> dict[str, LibraryFigures]:
    """The runs named ``library/configuration`` (each library's default first) scored and put
    together by library, each with its best configuration."""
    by_library: dict[str, dict[str, PeerRun]] = {}
    for name, run in runs.items():
        library, configuration = name.split("/", 1)
        by_library.setdefault(library, {})[configuration] = run
    libraries = {}
    for library, configured in by_library.items():
        figures = {name: peer_figures(run, qrels) for name, run in configured.items()}
        libraries[library] = LibraryFigures(
            library=next(iter(configured.values())).library,
            default=next(iter(configured)),
            best=best_configuration(figures),
            configurations=figures,
        )
    return libraries


def several_relevant(qrels: Mapping[str, Qrels]) -> bool:
    """Whether most queries have more than one relevant document (as multi-hop questions do)."""
    return sum(len(relevant_ids(judged)) > 1 for judged in qrels.values()) * 2 > len(qrels)


def side_by_side(
    name: str, dataset: BeirDataset, ours: BeirReport, runs: Mapping[str, PeerRun]
) -> SideBySide:
    """The report of a run of ``run_side_by_side`` on ``dataset``, named ``name``."""
    qrels = {qid: dataset.qrels[qid] for qid in dataset.judged_queries}
    return SideBySide(
        dataset=name,
        queries=len(qrels),
        documents=len(dataset.corpus),
        several_relevant=several_relevant(qrels),
        ours=ours_figures(ours),
        peers=library_figures(runs, qrels),
    )


def columns(report: SideBySide) -> tuple[str, ...]:
    """The figures ``figure_rows`` gives, after the system and its configuration."""
    both = ("both@5", "both@10") if report.several_relevant else ()
    return ("nDCG@10", "R@100", *both, "p95 ms")


def compared_systems(report: SideBySide) -> list[tuple[str, str, SystemFigures]]:
    """Ours, then each library in its default configuration and, where another scored higher,
    in its best (``BEST`` for system): system, configuration and figures."""
    rows = [(OURS, "default", report.ours)]
    for name, peer in report.peers.items():
        rows.append((name, peer.default, peer.configurations[peer.default]))
        if peer.best != peer.default:
            rows.append((BEST, peer.best, peer.configurations[peer.best]))
    return rows


def figure_rows(report: SideBySide) -> list[list[str]]:
    """The rows of ``compared_systems``: system, configuration, then the figures of ``columns``."""
    rows = []
    for system, configuration, figures in compared_systems(report):
        both = (figures.both_at_5, figures.both_at_10) if report.several_relevant else ()
        scores = (figures.ndcg_at_10, figures.recall_at_100, *both)
        rows.append(
            [system, configuration, *(f"{score:.4f}" for score in scores), f"{figures.p95_ms:.1f}"]
        )
    return rows


def write_report(path: Path, report: SideBySide) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report.model_dump(mode="json"), indent=2), encoding="utf-8")

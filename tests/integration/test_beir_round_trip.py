"""A BEIR-layout dataset of a few dozen documents moved from the embedded stack to Pinecone
(the stand-ins) and MongoDB and back by `retrieval bench backup-round-trip --data`'s leg:
equal at the ends when nothing is lost, and not equal when a backup on the way lost a
document, though every end is audit-clean."""

from __future__ import annotations

import json
import random
from pathlib import Path

from retrieval.adapters.backup_file.gzip_json_lines import GzipJsonLinesBackupArchive
from retrieval_bench.backup_round_trip import Route, pinecone_standins
from retrieval_bench.beir.data import BeirDataset, load_dataset
from retrieval_bench.beir_round_trip import BeirLeg, BeirRoundTrip
from retrieval_bench.restore import DIMENSION
from retrieval_testkit import HashEmbedder

TOPICS = [
    "aspirin", "insulin", "malaria", "measles", "tuberculosis", "asthma", "leukemia", "anemia",
    "obesity", "migraine", "sepsis", "psoriasis", "glaucoma", "rabies", "scurvy", "gout",
    "cholera", "dengue", "rickets", "tetanus", "influenza", "hepatitis", "lupus", "typhoid",
    "eczema", "arthritis", "epilepsy", "anthrax", "polio", "mumps",
]  # fmt: skip
QUERIES = {f"q{n}": f"{topic} outcomes in adults" for n, topic in enumerate(TOPICS[:12])}
DROPPED = "d03"
"""A document judged relevant to ``q3``."""


def beir_directory(root: Path) -> Path:
    """corpus.jsonl, queries.jsonl and qrels/test.tsv as BEIR lays them out: one document per
    topic, one query for each of the first twelve, judged by its topic's document."""
    (root / "qrels").mkdir(parents=True)
    corpus = [
        {"_id": f"d{n:02d}", "title": f"{topic.title()} study",
         "text": f"A cohort study of {topic} in adults, with {topic} outcomes measured."}
        for n, topic in enumerate(TOPICS)
    ]  # fmt: skip
    (root / "corpus.jsonl").write_text("\n".join(json.dumps(row) for row in corpus))
    queries = [{"_id": query, "text": text} for query, text in QUERIES.items()]
    (root / "queries.jsonl").write_text("\n".join(json.dumps(row) for row in queries))
    judged = [f"q{n}\td{n:02d}\t1" for n in range(len(QUERIES))]
    (root / "qrels" / "test.tsv").write_text("\n".join(["query-id\tcorpus-id\tscore", *judged]))
    return root


async def cohort_leg(root: Path) -> BeirLeg:
    directory = beir_directory(root)
    dataset: BeirDataset = load_dataset(
        directory / "corpus.jsonl", directory / "queries.jsonl", directory / "qrels" / "test.tsv"
    )
    vectors = await HashEmbedder(DIMENSION).embed_passages([d.passage for d in dataset.corpus])
    return BeirLeg(dataset, "cohort", vectors, random.Random(7))


def drop_document(file: Path, document_id: str) -> None:
    """The backup at ``file`` written again without ``document_id``."""
    archive = GzipJsonLinesBackupArchive()
    header = archive.verify(file).header
    kept = [d for d in archive.documents(file) if d.document_id != document_id]
    with archive.create(file, header) as written:
        for document in kept:
            written.add(document)


async def test_a_beir_corpus_comes_back_equal(tmp_path: Path) -> None:
    leg = await cohort_leg(tmp_path / "data")
    with pinecone_standins() as pinecone:
        trip = await leg.round_trip(Route(tmp_path / "trip", pinecone))
    original, back = trip.ends["embedded"], trip.ends["embedded_again"]
    assert (trip.documents, trip.chunks, original.figures.queries) == (30, 30, 12)
    assert all(scored.state.clean for scored in trip.ends.values())
    assert original.figures.recall_at_100 == 1.0
    assert back.figures == original.figures
    assert (trip.identical, trip.equal, trip.reordered) == (True, True, 0)


async def test_a_document_lost_on_the_way_is_caught(tmp_path: Path) -> None:
    leg = await cohort_leg(tmp_path / "data")
    route_seconds: dict[str, float] = {}
    with pinecone_standins() as pinecone:
        route = Route(tmp_path / "trip", pinecone)
        file, original = await route.start(leg.namespace, leg.fill, leg.observe, route_seconds)
        drop_document(file, DROPPED)
        carried = await route.carry(file, leg.observe, route_seconds)
    trip = BeirRoundTrip(leg.name, 30, {"embedded": original, **carried}, route_seconds)
    back = trip.ends["embedded_again"]
    assert all(scored.state.clean for scored in trip.ends.values())
    assert set(original.state.records) - set(back.state.records) == {DROPPED}
    assert back.figures.recall_at_100 < original.figures.recall_at_100
    assert (trip.identical, trip.equal) == (False, False)
    assert trip.reordered >= 1

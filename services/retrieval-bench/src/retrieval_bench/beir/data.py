"""A BEIR dataset on disk: corpus, queries, graded judgements, and optionally embeddings.

Formats (as BEIR publishes them): ``corpus.jsonl`` lines ``{"_id", "title", "text"}``;
``queries.jsonl`` lines ``{"_id", "text"}``, optionally ``"metadata": {"type": ...}`` (a
multi-hop dataset's question types: bridge, comparison); ``qrels/<split>.tsv`` with a header
line, then ``query-id<TAB>corpus-id<TAB>score``. An embeddings file is a float32 ``.npy``
matrix with one row per corpus document, in corpus order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from retrieval.domain.models import SLUG_PATTERN, Frozen
from retrieval.errors import InvalidRequestError
from retrieval.ports.embedder import Matrix

DOCUMENT_ID = re.compile(SLUG_PATTERN)
PUBLISHED_ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*(0\.\d+)\s*\|\s*(0\.\d+)\s*\|\s*$", re.MULTILINE)
MEASURED = re.compile(r"(?:^|[:;])\s*([^:;|\n]+?)\s+(0\.\d+)\s*/\s*(0\.\d+)", re.MULTILINE)


@dataclass(frozen=True)
class BeirDocument:
    doc_id: str
    title: str
    text: str

    @property
    def passage(self) -> str:
        """What BEIR embeds for a document, and what the embeddings files were made from."""
        return f"{self.title} {self.text}"


@dataclass(frozen=True)
class BeirDataset:
    corpus: list[BeirDocument]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    types: dict[str, str] = field(default_factory=dict)
    """The type of each query that has one, by query id."""

    @property
    def judged_queries(self) -> dict[str, str]:
        """Queries that have judgements, in the order of the qrels file."""
        return {qid: self.queries[qid] for qid in self.qrels if qid in self.queries}


class ReferenceFigure(Frozen):
    """A result someone else reported for the same queries."""

    system: str
    ndcg_at_10: float
    recall_at_100: float


def json_lines(path: Path) -> Iterator[dict]:
    if not path.is_file():
        raise InvalidRequestError(f"{path}: no such file", field="path")
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as error:
                    raise InvalidRequestError(f"{path}:{number}: not JSON ({error})") from error


def load_corpus(path: Path) -> list[BeirDocument]:
    corpus = []
    for row in json_lines(path):
        doc_id = str(row["_id"])
        if not DOCUMENT_ID.match(doc_id):
            raise InvalidRequestError(f"{path}: document id {doc_id!r} is not a valid id")
        corpus.append(BeirDocument(doc_id, row.get("title") or "", row.get("text") or ""))
    return corpus


def load_queries(path: Path) -> dict[str, str]:
    return query_texts(json_lines(path))


def query_texts(rows: Iterable[dict]) -> dict[str, str]:
    return {str(row["_id"]): row["text"] for row in rows}


def query_types(rows: Iterable[dict]) -> dict[str, str]:
    """``metadata.type`` of each query whose metadata names a type."""
    return {
        str(row["_id"]): kind
        for row in rows
        if isinstance(kind := (row.get("metadata") or {}).get("type"), str)
    }


def load_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Judgements by query, then document; a first line that is not a judgement is a header."""
    if not path.is_file():
        raise InvalidRequestError(f"{path}: no such file", field="path")
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split("\t")
        if not line.strip() or (number == 1 and not fields[-1].strip().lstrip("-").isdigit()):
            continue
        if len(fields) != 3:
            raise InvalidRequestError(f"{path}:{number}: expected query-id, corpus-id, score")
        query, document, grade = (field.strip() for field in fields)
        qrels.setdefault(query, {})[document] = int(grade)
    return qrels


def load_dataset(corpus: Path, queries: Path, qrels: Path) -> BeirDataset:
    documents = load_corpus(corpus)
    rows = list(json_lines(queries))  # read once for the texts and the types
    return BeirDataset(documents, query_texts(rows), load_qrels(qrels), query_types(rows))


def default_dataset_name(directory: Path) -> str:
    """A dataset's name from its folder: lower case, every other character than a letter,
    digit or ``_`` made ``_``."""
    return re.sub(r"[^a-z0-9_]", "_", directory.resolve().name.lower())


def load_embeddings(path: Path) -> Matrix:
    if not path.is_file():
        raise InvalidRequestError(
            f"{path}: no such file (pass --embeddings, or --embed-all to embed the corpus)",
            field="embeddings",
        )
    return np.load(path).astype(np.float32, copy=False)


def reference_figures(readme: str) -> list[ReferenceFigure]:
    """nDCG@10 / Recall@100 pairs a dataset's README reports: table rows ``| system | a | b |``
    and phrases ``system a / b``; none from a README that never names Recall@100 (its pairs
    are other figures)."""
    if "Recall@100" not in readme:
        return []
    return [
        ReferenceFigure(system=system, ndcg_at_10=float(ndcg), recall_at_100=float(recall))
        for system, ndcg, recall in [*PUBLISHED_ROW.findall(readme), *MEASURED.findall(readme)]
    ]

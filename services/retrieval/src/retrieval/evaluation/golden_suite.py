"""A golden suite on disk: seed documents and the questions they must answer.

Layout of a suite directory::

    seed_documents.json       {"documents": [{document_id, title, domain, content, metadata}]}
    retrieval/samples.json    {"samples": [{id, query, relevant, domains?,
                                            confidence_threshold?, kind, note}]}

``relevant`` grades documents (2 answers the question, 1 helps). A sample with no
relevant document is a negative: it passes when nothing scores at or above its
``confidence_threshold``.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Annotated

from pydantic import Field, StringConstraints, ValidationError

from retrieval.adapters.files.document_files import load_documents
from retrieval.domain.allowed_domains import refusal, refused_domains
from retrieval.domain.models import DomainName, Frozen, RagDocument, Slug
from retrieval.errors import InvalidRequestError

DOCUMENTS_FILE = "seed_documents.json"
SAMPLES_FILE = Path("retrieval") / "samples.json"
Kind = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z_]{0,63}$")]


class GoldenSample(Frozen):
    """One question of the suite and the documents that answer it."""

    id: Slug = Field(description="Identifier of the sample, unique in the suite.")
    query: str = Field(min_length=1, description="The question, as an agent would ask it.")
    relevant: dict[str, Annotated[int, Field(ge=1)]] = Field(
        description="Graded relevant documents (2 answers, 1 helps); empty for a negative."
    )
    domains: tuple[DomainName, ...] = Field(
        default=(), description="Domain filter of the request; empty searches every domain."
    )
    confidence_threshold: float = Field(
        default=0.0, ge=0.0, le=1.0, description="Matches scoring below it are dropped."
    )
    kind: Kind = Field(description="What the sample exercises (direct, typo, negative, ...).")
    note: str = Field(default="", description="Why these documents are the answer.")

    @property
    def is_negative(self) -> bool:
        return not self.relevant


class SampleFile(Frozen):
    samples: tuple[GoldenSample, ...] = Field(min_length=1, description="Every sample.")


class GoldenSuite(Frozen):
    """Seed documents and samples, checked against each other."""

    name: Slug = Field(description="Name of the suite (its directory name).")
    documents: tuple[RagDocument, ...] = Field(description="Documents seeded before the run.")
    samples: tuple[GoldenSample, ...] = Field(description="Questions asked after seeding.")

    @property
    def document_domains(self) -> dict[str, str]:
        return {doc.document_id: doc.domain for doc in self.documents}


def load_suite(directory: Path, allowed_domains: Collection[str]) -> GoldenSuite:
    """Read and check a suite; raises ``InvalidRequestError`` naming the first problem."""
    documents = load_documents([directory / DOCUMENTS_FILE])
    samples_path = directory / SAMPLES_FILE
    if not samples_path.exists():
        raise InvalidRequestError(f"{samples_path}: no such file", field="samples")
    try:
        samples = SampleFile.model_validate_json(samples_path.read_text(encoding="utf-8")).samples
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidRequestError(f"{samples_path}: {where}: {first['msg']}") from error
    suite = GoldenSuite(
        name=re.sub(r"[^A-Za-z0-9_.\-]", "-", directory.resolve().name) or "suite",
        documents=tuple(documents),
        samples=samples,
    )
    check_suite(suite, allowed_domains)
    return suite


def check_suite(suite: GoldenSuite, allowed_domains: Collection[str]) -> None:
    """Every sample can be answered: its documents exist and lie inside its domain filter;
    every domain is in ``allowed_domains`` unless that allow-list is empty."""
    domains = suite.document_domains
    problems = [
        f"document {doc.document_id}: {refusal(refused, allowed_domains)}"
        for doc in suite.documents
        if (refused := refused_domains([doc.domain], allowed_domains))
    ]
    seen: set[str] = set()
    for sample in suite.samples:
        where = f"sample {sample.id}"
        if sample.id in seen:
            problems.append(f"{where}: id used twice")
        seen.add(sample.id)
        refused = refused_domains(sample.domains, allowed_domains)
        if refused:
            problems.append(f"{where}: {refusal(refused, allowed_domains)}")
        problems += [
            f"{where}: relevant document {doc!r} is not a seed document"
            for doc in sample.relevant
            if doc not in domains
        ]
        problems += [
            f"{where}: relevant document {doc!r} ({domains[doc]}) is outside its domain filter"
            for doc in sample.relevant
            if doc in domains and sample.domains and domains[doc] not in sample.domains
        ]
        if sample.is_negative and sample.confidence_threshold <= 0:
            problems.append(f"{where}: a negative needs a confidence_threshold above 0")
    if problems:
        raise InvalidRequestError("; ".join(problems), field="golden suite")

"""A namespace's worth of generated documents: three chunks each, every other one from a
file, each with metadata; and questions their words answer."""

from __future__ import annotations

from retrieval.domain.models import RagDocument
from retrieval.domain.provenance import Source

WORDS = [
    "tea",
    "bushes",
    "frost",
    "pruning",
    "plucking",
    "shade",
    "monsoon",
    "soil",
    "acidity",
    "nitrogen",
    "blister",
    "blight",
    "terraces",
    "clonal",
    "cuttings",
    "withering",
    "rolling",
    "oxidation",
    "drying",
    "grading",
    "altitude",
    "rainfall",
]
QUESTIONS = ("frost on the terraces", "pruning clonal cuttings", "withering and rolling leaf")


def estate_notes(count: int) -> list[RagDocument]:
    """``count`` documents of three 120-word sections each (one chunk a section)."""
    documents = []
    for n in range(count):
        sections = [
            f"## Part {part}\n\n"
            + " ".join(WORDS[(n * 7 + part * 3 + k) % len(WORDS)] for k in range(120))
            for part in range(3)
        ]
        documents.append(
            RagDocument(
                document_id=f"doc-{n:05d}",
                title=f"Notes {n}",
                domain="tea_cultivation",
                content="\n\n".join(sections),
                metadata={"estate": f"estate-{n % 3}"},
                source=Source(uri=f"/kb/notes/{n}.md", file_type="markdown") if n % 2 else None,
            )
        )
    return documents

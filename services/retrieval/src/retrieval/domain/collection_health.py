"""How healthy a collection is, and why: green, yellow (degraded) or red (a store is down)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

from pydantic import Field

from retrieval.domain.models import Frozen


class HealthStatus(StrEnum):
    GREEN = "green"
    """Every store answers and holds every chunk whole; no write is left half done."""
    YELLOW = "yellow"
    """Degraded: orphans, stale chunks or pending documents (``retrieval reconcile`` repairs)."""
    RED = "red"
    """A store did not answer."""


SEVERITY = (HealthStatus.GREEN, HealthStatus.YELLOW, HealthStatus.RED)


class Footprint(Frozen):
    """What one embedded store occupies; None where that does not apply or cannot be read."""

    store: str = Field(description="The store: vector index, keyword index or MongoDB.")
    disk_bytes: int | None = Field(ge=0, description="Bytes of the files of its data directory.")
    memory_bytes: int | None = Field(ge=0, description="Bytes of its in-memory arrays.")


class Orphans(Frozen):
    """What the audit of one namespace found out of place, by kind."""

    texts_without_vectors: int = Field(ge=0, description="Chunk texts whose vector is missing.")
    vectors_without_texts: int = Field(ge=0, description="Vectors whose chunk text is missing.")
    texts_without_keywords: int = Field(
        ge=0, description="Chunk texts whose keyword entry is missing."
    )
    keywords_without_texts: int = Field(
        ge=0, description="Keyword entries whose chunk text is missing."
    )
    texts_without_graph: int = Field(
        default=0, ge=0, description="Chunk texts whose graph record is missing."
    )
    graph_without_texts: int = Field(
        default=0, ge=0, description="Graph records whose chunk text is missing."
    )
    stale_chunks: int = Field(ge=0, description="Stored chunks of no current version.")
    pending_documents: int = Field(ge=0, description="Documents whose write is not committed.")


ORPHAN_LABELS = {
    "texts_without_vectors": "texts without vectors",
    "vectors_without_texts": "vectors without texts",
    "texts_without_keywords": "texts without keyword entries",
    "keywords_without_texts": "keyword entries without texts",
    "texts_without_graph": "texts without graph records",
    "graph_without_texts": "graph records without texts",
    "stale_chunks": "stale chunks",
    "pending_documents": "pending documents",
}


class Verdict(Frozen):
    """A status and the reasons for it, one line each."""

    status: HealthStatus = Field(description="Green, yellow or red.")
    reasons: tuple[str, ...] = Field(description="Why it is not green; empty when green.")


def namespace_verdict(namespace: str, orphans: Orphans) -> Verdict:
    """Yellow with a reason per kind of orphan found, green when there is none."""
    reasons = tuple(
        f"namespace {namespace}: {count} {label}"
        for kind, label in ORPHAN_LABELS.items()
        if (count := getattr(orphans, kind))
    )
    return Verdict(status=HealthStatus.YELLOW if reasons else HealthStatus.GREEN, reasons=reasons)


def texts_outside_namespaces(total_texts: int, texts_in_namespaces: int) -> Verdict:
    """Chunk texts beyond those of the namespaces the vector index lists lie in namespaces
    that lost every vector: yellow."""
    missing = total_texts - texts_in_namespaces
    if missing <= 0:
        return Verdict(status=HealthStatus.GREEN, reasons=())
    return Verdict(
        status=HealthStatus.YELLOW,
        reasons=(f"{missing} chunk texts in namespaces that hold no vectors",),
    )


def unreachable(scope: str, error: str) -> Verdict:
    return Verdict(status=HealthStatus.RED, reasons=(f"{scope}: store unreachable: {error}",))


def worst(statuses: Iterable[HealthStatus]) -> HealthStatus:
    return max(statuses, key=SEVERITY.index, default=HealthStatus.GREEN)


def overall(verdicts: Iterable[Verdict]) -> Verdict:
    """The worst status of all, with every reason in order."""
    verdicts = list(verdicts)
    return Verdict(
        status=worst(verdict.status for verdict in verdicts),
        reasons=tuple(reason for verdict in verdicts for reason in verdict.reasons),
    )

"""What the MCP tools answer: structured content (these models give the output schemas) and
the text a model reads, sources numbered as ``[n]``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from retrieval.domain.answers import Answer
from retrieval.domain.context import Citation, provenance_fields
from retrieval.domain.models import RagChunk, RetrievalMatch, RetrievalResult
from retrieval.domain.provenance import location
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.outcomes import DeleteReport, DocumentOutcome


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


DEFINITIONS_PREFIX = "#/$defs/"


def self_contained(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` (pydantic's, of a model that does not contain itself) with each ``$ref`` to
    its ``$defs`` replaced by the definition, and each ``anyOf`` of bare types (a nullable
    field) as one ``type`` list: it accepts the same documents, and a client validates a
    result against it without resolving references, in about two thirds of the time."""
    definitions = schema.get("$defs", {})

    def inlined(node: Any) -> Any:
        if isinstance(node, list):
            return [inlined(item) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith(DEFINITIONS_PREFIX):
            return inlined(definitions[reference.removeprefix(DEFINITIONS_PREFIX)])
        copied = {key: inlined(value) for key, value in node.items() if key != "$defs"}
        arms = copied.get("anyOf")
        if isinstance(arms, list) and all(
            isinstance(a, dict) and a.keys() == {"type"} for a in arms
        ):
            del copied["anyOf"]
            copied["type"] = [arm["type"] for arm in arms]
        return copied

    return inlined(schema)


class Source(Output):
    number: int = Field(description="The [n] the text and an answer cite it by.")
    chunk_id: str = Field(description="The chunk, for read_document and citations.")
    document_id: str = Field(description="Its document, for read_document.")
    title: str = Field(description="Title of the document.")
    source: str | None = Field(description="Path or URL of the document, when it has one.")
    section: str = Field(description="Heading path of the chunk below the title.")
    pages: list[int] = Field(description="Pages of the source it spans (PDF); empty if none.")


class Match(Source):
    text: str = Field(description="Text of the chunk.")
    score: float = Field(description="Ranking score; compare within one result only.")


class SearchResults(Output):
    query: str = Field(description="The query as asked.")
    namespace: str = Field(description="Namespace searched.")
    matches: list[Match] = Field(description="Best first, numbered from 1.")
    degraded: list[str] = Field(description="Searches that failed; the others answered alone.")


class AnswerResult(Output):
    answered: bool = Field(description="False when nothing relevant was found to answer from.")
    text: str = Field(description="The answer, citing sources as [n].")
    citations: list[Source] = Field(description="The sources the answer cites.")
    namespace: str = Field(description="Namespace searched.")
    model: str | None = Field(description="The model that wrote the answer.")


class DocumentEntry(Output):
    document_id: str = Field(description="Id for read_document and delete_documents.")
    title: str | None = Field(description="Its title.")
    source: str | None = Field(description="Its path or URL.")
    chunks: int = Field(description="How many chunks it has.")
    updated_at: datetime | None = Field(description="When its current version was written.")


class DocumentList(Output):
    namespace: str = Field(description="Namespace listed.")
    documents: list[DocumentEntry] = Field(description="This page of documents, by id.")
    total: int = Field(description="Documents in the namespace (under the prefix, if given).")
    next_offset: int | None = Field(description="Offset of the next page; null on the last.")


class Chunk(Output):
    position: int = Field(description="Position in the document, from 0.")
    chunk_id: str = Field(description="Identifier of the chunk.")
    section: str = Field(description="Heading path below the title.")
    pages: list[int] = Field(description="Pages of the source it spans.")
    text: str = Field(description="Text of the chunk.")


class DocumentText(Output):
    namespace: str = Field(description="Namespace of the document.")
    document_id: str = Field(description="The document.")
    title: str | None = Field(description="Its title.")
    source: str | None = Field(description="Its path or URL.")
    chunks: list[Chunk] = Field(description="This page of its chunks, in order.")
    total_chunks: int = Field(description="How many chunks it has.")
    next_offset: int | None = Field(description="Offset of the next page; null on the last.")


class WrittenDocument(Output):
    document_id: str = Field(description="The document.")
    outcome: str = Field(description="created, updated, unchanged or failed.")
    chunks: int = Field(description="Chunks written.")
    error: str | None = Field(description="Why it failed.")


class AddedDocuments(Output):
    namespace: str = Field(description="Namespace written.")
    documents: list[WrittenDocument] = Field(description="One per document, in order.")


class DeletedDocuments(Output):
    namespace: str = Field(description="Namespace written.")
    deleted: list[str] = Field(description="Documents deleted.")
    missing: list[str] = Field(description="Documents named that were not there.")
    busy: list[str] = Field(description="Documents being written by another call: try again.")


def provenance(number: int, match: RetrievalMatch | Citation) -> dict[str, Any]:
    """The fields of ``Source`` for ``match``, cited as ``[number]``."""
    return {"number": number, **provenance_fields(match)}


def search_results(result: RetrievalResult) -> SearchResults:
    matches = [
        Match(**provenance(n, m), text=m.content, score=m.score)
        for n, m in enumerate(result.matches, start=1)
    ]
    return SearchResults(
        query=result.query,
        namespace=result.namespace,
        matches=matches,
        degraded=list(result.degraded),
    )


def where(source: Source) -> str:
    parts = location(source.source, source.section, tuple(source.pages))
    return f"{source.title} ({', '.join(parts)})" if parts else source.title


def search_text(results: SearchResults) -> str:
    if not results.matches:
        return f"No passage of namespace {results.namespace!r} matches {results.query!r}."
    passages = [f"[{m.number}] {where(m)} - score {m.score:.3f}\n{m.text}" for m in results.matches]
    return "\n\n".join(
        [
            f"{len(passages)} passages of namespace {results.namespace!r}; cite them as [n].",
            *passages,
        ]
    )


def answer_result(answer: Answer) -> AnswerResult:
    return AnswerResult(
        answered=answer.answered,
        text=answer.text,
        citations=[Source(**provenance(c.number, c)) for c in answer.citations],
        namespace=answer.namespace,
        model=answer.model,
    )


def answer_text(result: AnswerResult) -> str:
    if not result.answered:
        return f"Nothing in namespace {result.namespace!r} answers this question."
    sources = [f"[{c.number}] {where(c)}" for c in result.citations]
    return "\n".join([result.text, "", "Sources:", *sources]) if sources else result.text


def document_list(
    namespace: str, documents: Sequence[DocumentSummary], offset: int, limit: int
) -> DocumentList:
    page = documents[offset : offset + limit]
    return DocumentList(
        namespace=namespace,
        documents=[
            DocumentEntry(
                document_id=d.document_id,
                title=d.title,
                source=d.source,
                chunks=d.chunks,
                updated_at=d.updated_at,
            )
            for d in page
        ],
        total=len(documents),
        next_offset=next_offset(offset, len(page), len(documents)),
    )


def next_offset(offset: int, shown: int, total: int) -> int | None:
    return offset + shown if offset + shown < total else None


def document_list_text(listed: DocumentList) -> str:
    lines = [
        f"{d.document_id}: {d.title or '(untitled)'} - {d.chunks} chunks" for d in listed.documents
    ]
    more = f"; more from offset {listed.next_offset}" if listed.next_offset is not None else ""
    header = f"{listed.total} documents in namespace {listed.namespace!r}{more}."
    return "\n".join([header, *lines])


def document_text(
    namespace: str, summary: DocumentSummary, chunks: Sequence[RagChunk], offset: int, limit: int
) -> DocumentText:
    page = chunks[offset : offset + limit]
    return DocumentText(
        namespace=namespace,
        document_id=summary.document_id,
        title=summary.title,
        source=summary.source,
        chunks=[
            Chunk(
                position=c.position,
                chunk_id=c.chunk_id,
                section=c.section,
                pages=list(c.pages),
                text=c.content,
            )
            for c in page
        ],
        total_chunks=len(chunks),
        next_offset=next_offset(offset, len(page), len(chunks)),
    )


def document_text_text(document: DocumentText) -> str:
    more = f" (more from offset {document.next_offset})" if document.next_offset is not None else ""
    header = f"# {document.title or document.document_id}{more}"
    return "\n\n".join([header, *(c.text for c in document.chunks)])


def added_documents(namespace: str, outcomes: Sequence[DocumentOutcome]) -> AddedDocuments:
    return AddedDocuments(
        namespace=namespace,
        documents=[
            WrittenDocument(
                document_id=o.document_id, outcome=o.outcome.value, chunks=o.chunks, error=o.error
            )
            for o in outcomes
        ],
    )


def added_text(added: AddedDocuments) -> str:
    return "\n".join(
        f"{d.document_id}: {d.outcome}, {d.chunks} chunks" + (f" ({d.error})" if d.error else "")
        for d in added.documents
    )


def deleted_documents(report: DeleteReport) -> DeletedDocuments:
    return DeletedDocuments(
        namespace=report.namespace,
        deleted=[d.document_id for d in report.deleted],
        missing=list(report.missing),
        busy=list(report.busy),
    )


def deleted_text(deleted: DeletedDocuments) -> str:
    parts = [f"deleted {deleted.deleted}"]
    parts += [f"not found {deleted.missing}"] if deleted.missing else []
    parts += [f"busy, try again {deleted.busy}"] if deleted.busy else []
    return f"namespace {deleted.namespace!r}: " + "; ".join(parts)

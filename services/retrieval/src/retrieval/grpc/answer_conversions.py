"""Answers, the contexts they read and their citations, as ``retrieval.v1`` messages and
back."""

from __future__ import annotations

from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent, ContextResult
from retrieval.domain.context import BuiltContext, Citation
from retrieval.domain.models import StageTimings
from retrieval.grpc.proto_values import optional_field
from retrieval.grpc.retrieval_conversions import result_from_proto, result_to_proto
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def citation_to_proto(citation: Citation) -> pb.Citation:
    return pb.Citation(
        number=citation.number,
        chunk_id=citation.chunk_id,
        document_id=citation.document_id,
        title=citation.title,
        domain=citation.domain,
        source=citation.source,
        section=citation.section,
        pages=citation.pages,
    )


def citation_from_proto(citation: pb.Citation) -> Citation:
    return Citation(
        number=citation.number,
        chunk_id=citation.chunk_id,
        document_id=citation.document_id,
        title=citation.title,
        domain=citation.domain,
        source=optional_field(citation, "source"),
        section=citation.section,
        pages=tuple(citation.pages),
    )


def built_context_to_proto(context: BuiltContext) -> pb.Context:
    return pb.Context(
        text=context.text,
        citations=[citation_to_proto(c) for c in context.citations],
        tokens=context.tokens,
        dropped=context.dropped,
        truncated=context.truncated,
    )


def built_context_from_proto(context: pb.Context) -> BuiltContext:
    return BuiltContext(
        text=context.text,
        citations=tuple(citation_from_proto(c) for c in context.citations),
        tokens=context.tokens,
        dropped=tuple(context.dropped),
        truncated=context.truncated,
    )


def context_result_to_proto(result: ContextResult) -> pb.BuildContextResponse:
    return pb.BuildContextResponse(
        context=built_context_to_proto(result.context),
        retrieval=result_to_proto(result.retrieval),
    )


def context_result_from_proto(response: pb.BuildContextResponse) -> ContextResult:
    return ContextResult(
        context=built_context_from_proto(response.context),
        retrieval=result_from_proto(response.retrieval),
    )


def answer_to_proto(answer: Answer) -> pb.AnswerResponse:
    return pb.AnswerResponse(
        answered=answer.answered,
        text=answer.text,
        citations=[citation_to_proto(c) for c in answer.citations],
        unknown_citations=answer.unknown_citations,
        confidence=answer.confidence,
        model=answer.model,
        finish_reason=answer.finish_reason,
        context=built_context_to_proto(answer.context),
        generation_ms=answer.generation_ms,
        query_truncated=answer.query_truncated,
        degraded=answer.degraded,
        namespace=answer.namespace,
    )


def answer_from_proto(response: pb.AnswerResponse, query: str) -> Answer:
    """The answer to ``query``; the retrieval's timings stay on the server (its log line
    has them)."""
    return Answer(
        answered=response.answered,
        text=response.text,
        citations=tuple(citation_from_proto(c) for c in response.citations),
        unknown_citations=tuple(response.unknown_citations),
        confidence=response.confidence,
        context=built_context_from_proto(response.context),
        model=response.model if response.HasField("model") else None,
        finish_reason=response.finish_reason if response.HasField("finish_reason") else None,
        query=query,
        namespace=response.namespace,
        retrieval_timings=StageTimings(),
        generation_ms=response.generation_ms,
        query_truncated=response.query_truncated,
        degraded=tuple(response.degraded),
    )


def answer_event_to_proto(event: AnswerEvent) -> pb.AnswerStreamResponse:
    if isinstance(event, AnswerDelta):
        return pb.AnswerStreamResponse(delta=event.text)
    return pb.AnswerStreamResponse(answer=answer_to_proto(event.answer))


def answer_event_from_proto(message: pb.AnswerStreamResponse, query: str) -> AnswerEvent:
    """The event of one message of a streamed answer to ``query``."""
    if message.HasField("answer"):
        return AnswerDone(answer=answer_from_proto(message.answer, query))
    return AnswerDelta(text=message.delta)

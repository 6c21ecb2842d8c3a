"""Answers, the contexts they read and their citations, as ``retrieval.v1`` messages and
back."""

from __future__ import annotations

from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent, ContextResult
from retrieval.domain.context import BuiltContext, Citation
from retrieval.domain.models import StageTimings
from retrieval.grpc.proto_values import plain_fields
from retrieval.grpc.retrieval_conversions import result_from_proto, result_to_proto
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb


def citation_from_proto(citation: pb.Citation) -> Citation:
    return Citation(**plain_fields(citation, Citation))


def built_context_to_proto(context: BuiltContext) -> pb.Context:
    return pb.Context(**context.model_dump())


def built_context_from_proto(context: pb.Context) -> BuiltContext:
    return BuiltContext(
        **plain_fields(context, BuiltContext),
        citations=tuple(citation_from_proto(c) for c in context.citations),
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
    return pb.AnswerResponse(**answer.model_dump(exclude={"query", "retrieval_timings"}))


def answer_from_proto(response: pb.AnswerResponse, query: str) -> Answer:
    """The answer to ``query``; the retrieval's timings stay on the server (its log line
    has them)."""
    return Answer(
        **plain_fields(response, Answer),
        citations=tuple(citation_from_proto(c) for c in response.citations),
        context=built_context_from_proto(response.context),
        query=query,
        retrieval_timings=StageTimings(),
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

"""What answering a question from retrieved context gives back."""

from __future__ import annotations

from pydantic import Field

from retrieval.domain.context import BuiltContext, Citation
from retrieval.domain.models import Frozen, RetrievalResult, StageTimings


class ContextResult(Frozen):
    """A retrieval and the numbered context built from its matches."""

    retrieval: RetrievalResult = Field(description="The matches, best first.")
    context: BuiltContext = Field(description="The matches that fit the budget, numbered.")


class Answer(Frozen):
    """A model's answer from numbered context, and how well it cites it."""

    answered: bool = Field(
        description="Whether the model was asked; false when no context was found (no "
        "matches, or none fit the budget), and then ``text`` is empty."
    )
    text: str = Field(description="The model's answer, citations as [n].")
    citations: tuple[Citation, ...] = Field(
        default=(), description="Passages the answer cites, in order of first citation."
    )
    unknown_citations: tuple[int, ...] = Field(
        default=(), description="Numbers the answer cites that the context does not have."
    )
    confidence: float = Field(
        ge=0,
        le=1,
        description="Share of the answer's sentences citing a passage of the context; 0 "
        "when it cites none.",
    )
    context: BuiltContext = Field(description="The numbered context the model was given.")
    model: str | None = Field(description="The model that answered; None when none was asked.")
    finish_reason: str | None = Field(
        default=None, description="Why the model stopped; ``length`` means the answer was cut."
    )
    query: str = Field(description="The question as asked.")
    namespace: str = Field(description="Namespace searched.")
    retrieval_timings: StageTimings = Field(description="Stage durations of the retrieval.")
    generation_ms: float = Field(default=0.0, ge=0, description="Time the model took.")
    query_truncated: bool = Field(
        default=False, description="The query was cut to the embedding model's window."
    )
    degraded: tuple[str, ...] = Field(
        default=(), description="Retrieval sources that failed; the others answered alone."
    )


class AnswerDelta(Frozen):
    """A piece of an answer's text, as the model writes it."""

    text: str = Field(description="The next piece of the text; the pieces joined are the text.")


class AnswerDone(Frozen):
    """The last event of a streamed answer."""

    answer: Answer = Field(description="The whole answer, its citations resolved.")


AnswerEvent = AnswerDelta | AnswerDone
"""What a streamed answer gives: deltas as the model writes, then one ``AnswerDone``."""

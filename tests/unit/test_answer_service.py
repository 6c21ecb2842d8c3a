"""AnswerService over the in-memory doubles and a scripted chat model."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncGenerator

import pytest
import structlog

from retrieval.domain.answers import Answer, AnswerDelta, AnswerDone, AnswerEvent
from retrieval.domain.context import build_context
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument, RetrievalQuery
from retrieval.errors import (
    BackendNotConfiguredError,
    BackendUnavailableError,
    InvalidRequestError,
)
from retrieval.logging import current_correlation_id
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.retrieval.pipeline import SearchPlan
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval_testkit import (
    ChatRequest,
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

NS = "answers"
QUESTION = "What does blister blight do to tea leaves?"

DOCUMENTS = [
    RagDocument(
        document_id="blister-blight",
        title="Blister blight",
        domain="plant_diseases",
        content="Blister blight fungus attacks young tea leaves in wet monsoon weather.",
    ),
    RagDocument(
        document_id="monsoon",
        title="Monsoon",
        domain="weather_patterns",
        content="The monsoon brings heavy rain and wet weather to tea estates.",
    ),
    RagDocument(
        document_id="pruning",
        title="Pruning",
        domain="tea_cultivation",
        content="Tea bushes are pruned every four years to keep a plucking table.",
    ),
]


@pytest.fixture
async def retrieval() -> RetrievalService:
    embedder = HashEmbedder()
    index, keywords, chunks = (
        InMemoryVectorIndex(),
        InMemoryKeywordIndex(),
        InMemoryChunkRepository(),
    )
    ingestion = IngestionService(
        embedder,
        ChunkStores(index, keywords, chunks),
        InMemoryDocumentLedger(),
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        NS,
        ChunkingPolicy(),
    )
    await ingestion.ingest(DOCUMENTS, NS)
    stages = offline_stages(embedder, index, keywords, chunks)
    return RetrievalService(
        stages, DEFAULT_DOMAINS, NS, SearchPlan(), uncached(), quiet_telemetry()
    )


def passage_number(request: ChatRequest, title: str) -> int:
    """The number the prompt gives the passage of the document titled ``title``."""
    found = re.search(rf"^\[(\d+)\] {re.escape(title)} \(", request.messages[-1].content, re.M)
    assert found, f"no passage titled {title!r} in the prompt"
    return int(found.group(1))


def cites_blight_and_monsoon(request: ChatRequest) -> str:
    blight = passage_number(request, "Blister blight")
    monsoon = passage_number(request, "Monsoon")
    return (
        f"Blister blight attacks young leaves [{blight}]. "
        f"It thrives in monsoon rain [{monsoon}][99]. "
        "Planters should take care."
    )


async def test_the_prompt_holds_the_numbered_context_and_the_question(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm()
    service = AnswerService(retrieval, llm, max_answer_tokens=200)
    query = RetrievalQuery(query=QUESTION, top_k=3)

    answer = await service.answer(query)

    [call] = llm.calls
    system, user = call.messages
    assert system.role == "system"
    assert "[1]" in system.content
    assert "only" in system.content
    assert "do not know" in system.content
    assert user.role == "user"
    expected = build_context((await retrieval.retrieve_query(query)).matches, budget_tokens=3000)
    assert answer.context.text == expected.text
    assert user.content == f"Context:\n\n{expected.text}\n\nQuestion: {QUESTION}"
    assert call.max_tokens == 200
    assert call.temperature == 0.0


async def test_a_question_alone_is_asked_with_the_querys_defaults(
    retrieval: RetrievalService,
) -> None:
    service = AnswerService(retrieval, ScriptedLlm(cites_blight_and_monsoon))

    answer = await service.answer(QUESTION)
    asked = await service.answer(RetrievalQuery(query=QUESTION))

    assert answer.answered
    assert answer.text == asked.text
    assert answer.citations == asked.citations


async def test_the_models_citations_map_to_the_chunks_they_number(
    retrieval: RetrievalService,
) -> None:
    service = AnswerService(retrieval, ScriptedLlm(cites_blight_and_monsoon, model="m-1"))

    answer = await service.answer(RetrievalQuery(query=QUESTION, top_k=3))

    assert answer.answered
    assert [c.document_id for c in answer.citations] == ["blister-blight", "monsoon"]
    included = {c.chunk_id for c in answer.context.citations}
    assert {c.chunk_id for c in answer.citations} <= included
    assert answer.unknown_citations == (99,)
    assert answer.confidence == pytest.approx(2 / 3)
    assert answer.model == "m-1"
    assert answer.finish_reason == "stop"
    assert answer.text.startswith("Blister blight attacks")


async def test_an_answer_citing_nothing_has_no_confidence(retrieval: RetrievalService) -> None:
    service = AnswerService(retrieval, ScriptedLlm(lambda request: "I do not know."))

    answer = await service.answer(RetrievalQuery(query=QUESTION))

    assert answer.answered
    assert answer.citations == ()
    assert answer.confidence == 0.0


async def test_the_answer_keeps_what_retrieval_reported(retrieval: RetrievalService) -> None:
    service = AnswerService(retrieval, ScriptedLlm())

    answer = await service.answer(RetrievalQuery(query=QUESTION))

    assert answer.query == QUESTION
    assert answer.namespace == NS
    assert answer.retrieval_timings.total_ms > 0
    assert answer.degraded == ()
    assert answer.generation_ms >= 0


async def test_build_context_numbers_the_retrieved_matches_in_order(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm()
    found = await AnswerService(retrieval, llm).build_context(
        RetrievalQuery(query=QUESTION, top_k=3)
    )

    assert [c.chunk_id for c in found.context.citations] == [
        m.chunk_id for m in found.retrieval.matches
    ]
    assert [c.number for c in found.context.citations] == [1, 2, 3]
    assert llm.calls == []


@pytest.mark.parametrize(
    "query",
    [
        RetrievalQuery(query="tea", domains=("quality_standards",)),
        RetrievalQuery(query=" \t "),
    ],
    ids=["no-match-in-domain", "blank"],
)
async def test_without_matches_the_model_is_not_asked(
    retrieval: RetrievalService, query: RetrievalQuery
) -> None:
    llm = ScriptedLlm()

    answer = await AnswerService(retrieval, llm).answer(query)

    assert llm.calls == []
    assert not answer.answered
    assert answer.text == ""
    assert answer.confidence == 0.0
    assert answer.citations == ()
    assert answer.model is None
    assert answer.context.citations == ()


async def test_when_no_chunk_fits_the_budget_the_model_is_not_asked(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm()

    answer = await AnswerService(retrieval, llm, budget_tokens=5).answer(
        RetrievalQuery(query=QUESTION, top_k=2)
    )

    assert llm.calls == []
    assert not answer.answered
    assert len(answer.context.dropped) == 2
    assert answer.context.truncated


@pytest.mark.parametrize(
    "error",
    [BackendUnavailableError("model server down"), BackendNotConfiguredError("no model set")],
)
async def test_a_model_error_reaches_the_caller_as_it_was_raised(
    retrieval: RetrievalService, error: Exception
) -> None:
    def fail(request: ChatRequest) -> str:
        raise error

    with pytest.raises(type(error)) as raised:
        await AnswerService(retrieval, ScriptedLlm(fail)).answer(RetrievalQuery(query=QUESTION))
    assert raised.value is error


async def test_an_unknown_domain_is_refused_before_the_model_is_asked(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm()

    with pytest.raises(InvalidRequestError) as raised:
        await AnswerService(retrieval, llm).answer(
            RetrievalQuery(query=QUESTION, domains=("astrology",))
        )
    assert raised.value.field == "domains"
    assert llm.calls == []


@pytest.mark.parametrize(("setting", "value"), [("budget_tokens", 0), ("max_answer_tokens", 0)])
async def test_limits_below_one_are_refused(
    retrieval: RetrievalService, setting: str, value: int
) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        AnswerService(retrieval, ScriptedLlm(), **{setting: value})
    assert raised.value.field == setting


# Streaming


async def streamed(events: AsyncGenerator[AnswerEvent, None]) -> tuple[list[str], Answer]:
    """The text of each delta and the answer the stream ends with; fails unless deltas come
    first and one ``AnswerDone`` last."""
    *deltas, done = [event async for event in events]
    assert isinstance(done, AnswerDone)
    assert all(isinstance(delta, AnswerDelta) for delta in deltas)
    return [delta.text for delta in deltas if isinstance(delta, AnswerDelta)], done.answer


async def test_a_stream_gives_the_text_as_it_comes_then_the_answer_with_its_citations(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm(cites_blight_and_monsoon, model="m-1")
    service = AnswerService(retrieval, llm, max_answer_tokens=200)
    query = RetrievalQuery(query=QUESTION, top_k=3)

    texts, answer = await streamed(service.stream(query))
    whole = await service.answer(query)

    assert len(texts) > 1
    assert "".join(texts) == answer.text == whole.text
    assert [c.document_id for c in answer.citations] == ["blister-blight", "monsoon"]
    assert answer.unknown_citations == (99,)
    assert answer.model_dump(exclude={"retrieval_timings", "generation_ms"}) == whole.model_dump(
        exclude={"retrieval_timings", "generation_ms"}
    )
    streamed_call, answered_call = llm.calls
    assert streamed_call == answered_call


async def test_a_question_alone_streams_with_the_querys_defaults(
    retrieval: RetrievalService,
) -> None:
    service = AnswerService(retrieval, ScriptedLlm(cites_blight_and_monsoon))

    texts, answer = await streamed(service.stream(QUESTION))

    assert answer.answered
    assert "".join(texts) == (await service.answer(RetrievalQuery(query=QUESTION))).text


async def test_without_context_a_stream_gives_only_the_unanswered_answer(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm()

    texts, answer = await streamed(
        AnswerService(retrieval, llm).stream(
            RetrievalQuery(query="tea", domains=("quality_standards",))
        )
    )

    assert texts == []
    assert not answer.answered
    assert llm.calls == []


@pytest.mark.parametrize(
    "error",
    [BackendUnavailableError("model server down"), BackendNotConfiguredError("no model set")],
)
async def test_a_model_error_reaches_the_reader_of_a_stream_as_it_was_raised(
    retrieval: RetrievalService, error: Exception
) -> None:
    def fail(request: ChatRequest) -> str:
        raise error

    stream = AnswerService(retrieval, ScriptedLlm(fail)).stream(RetrievalQuery(query=QUESTION))
    with pytest.raises(type(error)) as raised:
        await anext(stream)
    assert raised.value is error


async def test_closing_a_stream_closes_the_models_stream(retrieval: RetrievalService) -> None:
    llm = ScriptedLlm(cites_blight_and_monsoon)
    stream = AnswerService(retrieval, llm).stream(RetrievalQuery(query=QUESTION))

    assert isinstance(await anext(stream), AnswerDelta)
    await stream.aclose()

    assert llm.streams_cut == 1


async def test_breaking_out_of_a_stream_closes_the_models_stream(
    retrieval: RetrievalService,
) -> None:
    llm = ScriptedLlm(cites_blight_and_monsoon)

    async for event in AnswerService(retrieval, llm).stream(RetrievalQuery(query=QUESTION)):
        assert isinstance(event, AnswerDelta)
        break
    await asyncio.sleep(0.1)  # the loop closes the collected generator on its next turns

    assert llm.streams_cut == 1


async def test_a_streams_log_lines_share_a_correlation_id_the_reader_never_holds(
    retrieval: RetrievalService,
) -> None:
    service = AnswerService(retrieval, ScriptedLlm(cites_blight_and_monsoon))

    with structlog.testing.capture_logs(
        processors=[structlog.contextvars.merge_contextvars]
    ) as logs:
        async for _ in service.stream(RetrievalQuery(query=QUESTION)):
            assert current_correlation_id() is None

    assert current_correlation_id() is None
    assert "answer.done" in [entry["event"] for entry in logs]
    assert len({entry.get("correlation_id") for entry in logs}) == 1
    assert logs[0]["correlation_id"]

"""The language model's relevance filter as a stage: batches, concurrency, failures."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from retrieval.domain.chat import ChatMessage, Completion
from retrieval.domain.models import RagChunk, RetrievalQuery
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendTimeoutError
from retrieval.service.retrieval.pipeline import Candidate, PipelineState, SearchPlan
from retrieval.service.retrieval.pipeline.llm_filter import LlmFilter
from retrieval_testkit import ChatRequest, InMemoryChunkRepository, ScriptedLlm
from retrieval_testkit.scripted_llm import Reply
from retrieval_testkit.stages import candidate_texts

NS = "filter"
ON = SearchPlan(llm_filter=True)


def chunk(n: int) -> RagChunk:
    return RagChunk(
        chunk_id=f"doc-{n}#0000-0123456789abcdef",
        document_id=f"doc-{n}",
        namespace=NS,
        title=f"Document {n}",
        domain="tea_cultivation",
        position=0,
        content=f"text of chunk {n}",
        metadata={"n": n},
    )


async def stored(count: int) -> InMemoryChunkRepository:
    chunks = InMemoryChunkRepository()
    await chunks.upsert_many([chunk(n) for n in range(count)])
    chunks.get_many_calls = 0
    return chunks


def state(count: int, plan: SearchPlan = ON, top_k: int = 10) -> PipelineState:
    start = PipelineState.start(RetrievalQuery(query="tea", top_k=top_k), NS, plan)
    candidates = tuple(
        Candidate(chunk(n).chunk_id, 1.0 - n / 100, {"dense": 1.0 - n / 100}) for n in range(count)
    )
    return replace(start, candidates=candidates)


def passages(request: ChatRequest) -> dict[int, int]:
    """The chunk each number of the prompt stands for."""
    found = re.findall(r"^\[(\d+)\] text of chunk (\d+)$", request.messages[-1].content, re.M)
    return {int(number): int(n) for number, n in found}


def keeping(relevant: set[int]) -> Reply:
    """A reply naming the passages whose chunk is in ``relevant``."""

    def reply(request: ChatRequest) -> str:
        named = [number for number, n in passages(request).items() if n in relevant]
        return ", ".join(map(str, named)) or "none"

    return reply


def numbers(candidates: Sequence[Candidate]) -> list[int]:
    return [int(c.chunk_id.split("#")[0].removeprefix("doc-")) for c in candidates]


async def test_off_it_returns_its_input_and_asks_nothing() -> None:
    llm, chunks = ScriptedLlm(keeping(set())), await stored(4)
    before = state(4, SearchPlan())
    assert await LlmFilter(llm, candidate_texts(chunks)).run(before) is before
    assert llm.calls == []
    assert chunks.get_many_calls == 0


async def test_irrelevant_candidates_go_and_the_others_stay_as_they_were() -> None:
    llm, chunks = ScriptedLlm(keeping({0, 2, 3})), await stored(5)
    before = state(5)
    after = await LlmFilter(llm, candidate_texts(chunks)).run(before)
    assert after.candidates == tuple(before.candidates[n] for n in (0, 2, 3))
    assert after.degraded == ()
    [call] = llm.calls
    assert "tea" in call.messages[-1].content
    assert passages(call) == {1: 0, 2: 1, 3: 2, 4: 3, 5: 4}


async def test_texts_are_fetched_once_and_kept_for_the_fetch_stage() -> None:
    llm, chunks = ScriptedLlm(keeping({1})), await stored(5)
    known = {chunk(0).chunk_id: chunk(0)}
    after = await LlmFilter(llm, candidate_texts(chunks)).run(replace(state(5), chunks=known))
    assert chunks.get_many_calls == 1
    assert after.chunks == {c.chunk_id: c for c in map(chunk, range(5))}


async def test_passages_go_in_batches_of_the_configured_size() -> None:
    llm, chunks = ScriptedLlm(keeping({0, 4, 6})), await stored(7)
    after = await LlmFilter(llm, candidate_texts(chunks)).run(
        state(7, ON.model_copy(update={"llm_filter_batch": 3}))
    )
    assert [list(passages(call).values()) for call in llm.calls] == [[0, 1, 2], [3, 4, 5], [6]]
    assert numbers(after.candidates) == [0, 4, 6]


async def test_only_twice_top_k_are_judged_and_those_past_them_go() -> None:
    llm, chunks = ScriptedLlm(keeping(set(range(10)))), await stored(10)
    after = await LlmFilter(llm, candidate_texts(chunks)).run(state(10, top_k=3))
    assert numbers(after.candidates) == [0, 1, 2, 3, 4, 5]
    assert sorted(n for call in llm.calls for n in passages(call).values()) == [0, 1, 2, 3, 4, 5]


async def test_a_candidate_without_a_stored_text_is_left_for_the_fetch_stage() -> None:
    llm, chunks = ScriptedLlm(keeping({2})), await stored(3)
    await chunks.delete_chunks([chunk(1).chunk_id], NS)
    after = await LlmFilter(llm, candidate_texts(chunks)).run(state(3))
    assert numbers(after.candidates) == [1, 2]
    assert list(passages(llm.calls[0]).values()) == [0, 2]


def failing_on(chunk_number: int, otherwise: Reply) -> Reply:
    def reply(request: ChatRequest) -> str:
        if chunk_number in passages(request).values():
            raise BackendTimeoutError("model too slow")
        return otherwise(request)

    return reply


async def test_a_failed_call_keeps_its_batch_and_says_degraded() -> None:
    llm, chunks = ScriptedLlm(failing_on(3, keeping(set()))), await stored(6)
    with capture_logs() as logs:
        after = await LlmFilter(llm, candidate_texts(chunks)).run(
            state(6, ON.model_copy(update={"llm_filter_batch": 2}))
        )
    assert numbers(after.candidates) == [2, 3]
    assert after.degraded == (StageName.LLM_FILTER,)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
        "retrieve.llm_filter_failed"
    ]


async def test_a_reply_that_cannot_be_read_keeps_its_batch_and_says_degraded() -> None:
    llm, chunks = ScriptedLlm(lambda request: "Both look useful to me."), await stored(3)
    before = state(3)
    with capture_logs() as logs:
        after = await LlmFilter(llm, candidate_texts(chunks)).run(before)
    assert after.candidates == before.candidates
    assert after.degraded == (StageName.LLM_FILTER,)
    assert any(e["event"] == "retrieve.llm_filter_unreadable" for e in logs)


class SlowLlm:
    """Answers "none" after a pause, counting the calls in flight."""

    model = "slow"

    def __init__(self) -> None:
        self.in_flight = 0
        self.most_in_flight = 0
        self.calls = 0

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> Completion:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return Completion(text="none", model=self.model)


async def test_at_most_the_configured_calls_are_in_flight() -> None:
    for concurrency in (1, 3):
        llm, chunks = SlowLlm(), await stored(10)
        plan = ON.model_copy(update={"llm_filter_batch": 1, "llm_filter_concurrency": concurrency})
        after = await LlmFilter(llm, candidate_texts(chunks)).run(state(10, plan))
        assert (llm.calls, llm.most_in_flight) == (10, concurrency)
        assert after.candidates == ()


REPLIES = st.sampled_from(["judged", "garbage", "failure"])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), REPLIES), max_size=25),
    st.integers(1, 10),
    st.integers(1, 8),
)
def test_never_more_out_than_in_and_only_judged_irrelevant_ones_go(
    judgements: list[tuple[bool, str]], batch: int, top_k: int
) -> None:
    """Each chunk is relevant or not; the reply to the batch of its first passage is well
    formed, unreadable or a failure."""
    count = len(judgements)

    def reply(request: ChatRequest) -> str:
        kind = judgements[min(passages(request).values())][1]
        if kind == "failure":
            raise BackendTimeoutError("model too slow")
        if kind == "garbage":
            return "Let me think about it."
        return keeping({n for n, (relevant, _) in enumerate(judgements) if relevant})(request)

    async def run() -> tuple[PipelineState, PipelineState, int]:
        chunks = await stored(count)
        before = state(count, ON.model_copy(update={"llm_filter_batch": batch}), top_k)
        return (
            before,
            await LlmFilter(ScriptedLlm(reply), candidate_texts(chunks)).run(before),
            chunks.get_many_calls,
        )

    before, after, fetches = asyncio.run(run())
    judged = before.candidates[: 2 * top_k]
    positions = [judged.index(c) for c in after.candidates]
    assert positions == sorted(set(positions))
    batches = [
        range(start, min(start + batch, len(judged))) for start in range(0, len(judged), batch)
    ]
    trusted = {n for b in batches if judgements[b[0]][1] == "judged" for n in b}
    assert numbers(after.candidates) == [
        n for n in range(len(judged)) if n not in trusted or judgements[n][0]
    ]
    assert (after.degraded == (StageName.LLM_FILTER,)) == (len(trusted) < len(judged))
    assert fetches == (1 if judged else 0)

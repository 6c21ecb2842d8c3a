"""The local model's turns: queries before queued passage batches, writes never starved.

A gated embedder stands in for the slow model: each call records what it embeds and then
waits until the test lets it finish, so the order of calls is fully determined.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pytest

from retrieval.ports.embedder import Matrix, Vector
from retrieval.service.priority_embedder import PriorityEmbedder
from retrieval_testkit import HashEmbedder


class GatedEmbedder(HashEmbedder):
    """Records each call as it starts (``"q:text"`` or ``"p:text,text"``), then waits until
    ``finish_one`` lets the oldest running call end."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []
        self.gate = asyncio.Semaphore(0)
        self.running = 0

    async def embed_query(self, text: str) -> Vector:
        await self._hold(f"q:{text}")
        return await super().embed_query(text)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        await self._hold("p:" + ",".join(texts))
        return await super().embed_passages(texts)

    async def _hold(self, call: str) -> None:
        self.calls.append(call)
        self.running += 1
        try:
            await self.gate.acquire()
        finally:
            self.running -= 1


async def until(condition: Callable[[], bool]) -> None:
    """Let the loop run until ``condition`` holds (the calls under test never sleep)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never held")


async def finish_all(model: GatedEmbedder, tasks: Sequence[asyncio.Task]) -> None:
    """Let the running call finish, then the next, checking that never more than one runs."""

    def finished() -> bool:
        return all(task.done() for task in tasks)

    while True:
        await until(lambda: model.running > 0 or finished())
        if finished():
            return
        assert model.running == 1
        model.gate.release()
        await until(partial(next_call_started, model, len(model.calls), finished))


def next_call_started(model: GatedEmbedder, started: int, finished: Callable[[], bool]) -> bool:
    return len(model.calls) > started or finished()


def scheduler(
    model: GatedEmbedder,
    *,
    passage_calls: int = 2,
    query_slots: int = 1,
    query_burst: int = 8,
) -> PriorityEmbedder:
    return PriorityEmbedder(
        model,
        batch_size=2,
        passage_calls=passage_calls,
        query_slots=query_slots,
        query_burst=query_burst,
    )


async def test_a_query_runs_before_the_passage_batches_queued_ahead_of_it() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model)
    passages = asyncio.create_task(embedder.embed_passages(["a", "b", "c", "d", "e", "f"]))
    await until(lambda: model.calls == ["p:a,b"])
    queries = [asyncio.create_task(embedder.embed_query(text)) for text in ("q1", "q2")]
    await until(lambda: all(not task.done() for task in queries))
    await finish_all(model, [passages, *queries])
    assert model.calls == ["p:a,b", "q:q1", "q:q2", "p:c,d", "p:e,f"]
    together = passages.result()
    alone = await HashEmbedder().embed_passages(["a", "b", "c", "d", "e", "f"])
    np.testing.assert_allclose(together, alone)


async def test_a_waiting_passage_batch_goes_after_a_burst_of_queries() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model, query_burst=2)
    first = asyncio.create_task(embedder.embed_query("q0"))
    await until(lambda: model.calls == ["q:q0"])
    passages = asyncio.create_task(embedder.embed_passages(["a", "b", "c", "d"]))
    queries = [asyncio.create_task(embedder.embed_query(f"q{n}")) for n in range(1, 6)]
    await asyncio.sleep(0)
    await finish_all(model, [first, passages, *queries])
    assert model.calls == ["q:q0", "q:q1", "p:a,b", "q:q2", "q:q3", "p:c,d", "q:q4", "q:q5"]
    assert [task.result().shape for task in queries] == [(model.dimension,)] * 5


async def test_passage_requests_beyond_the_bound_wait_their_turn_in_order() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model, passage_calls=1)
    first = asyncio.create_task(embedder.embed_passages(["a", "b", "c", "d"]))
    await until(lambda: model.calls == ["p:a,b"])
    second = asyncio.create_task(embedder.embed_passages(["w", "x", "y", "z"]))
    await finish_all(model, [first, second])
    assert model.calls == ["p:a,b", "p:c,d", "p:w,x", "p:y,z"]


async def test_unbounded_passage_requests_share_the_model_batch_by_batch() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model, passage_calls=2)
    first = asyncio.create_task(embedder.embed_passages(["a", "b", "c", "d"]))
    await until(lambda: model.calls == ["p:a,b"])
    second = asyncio.create_task(embedder.embed_passages(["w", "x", "y", "z"]))
    await finish_all(model, [first, second])
    assert model.calls == ["p:a,b", "p:w,x", "p:c,d", "p:y,z"]


async def test_a_caller_cancelled_in_line_or_at_the_model_does_not_hold_up_the_others() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model)
    running = asyncio.create_task(embedder.embed_query("running"))
    await until(lambda: model.calls == ["q:running"])
    in_line = asyncio.create_task(embedder.embed_query("in line"))
    after = asyncio.create_task(embedder.embed_query("after"))
    await asyncio.sleep(0)
    in_line.cancel()
    running.cancel()
    await until(lambda: model.calls == ["q:running", "q:after"])
    model.gate.release()
    assert (await after).shape == (model.dimension,)
    for task in (in_line, running):
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_queries_run_side_by_side_up_to_the_slots_and_a_passage_batch_alone() -> None:
    model = GatedEmbedder()
    embedder = scheduler(model, query_slots=2)
    first = asyncio.create_task(embedder.embed_passages(["a", "b"]))
    await until(lambda: model.calls == ["p:a,b"])
    queries = [asyncio.create_task(embedder.embed_query(f"q{n}")) for n in range(1, 4)]
    await asyncio.sleep(0)
    assert model.running == 1
    model.gate.release()
    await until(lambda: model.calls == ["p:a,b", "q:q1", "q:q2"])
    await asyncio.sleep(0)
    assert model.running == 2
    model.gate.release()
    await until(lambda: model.calls[-1] == "q:q3")
    second = asyncio.create_task(embedder.embed_passages(["c", "d"]))
    await asyncio.sleep(0)
    model.gate.release()
    await until(lambda: model.running == 1)
    await asyncio.sleep(0)
    assert model.calls[-1] == "q:q3"
    model.gate.release()
    await until(lambda: model.calls[-1] == "p:c,d")
    assert model.running == 1
    model.gate.release()
    await asyncio.gather(first, second, *queries)


async def test_no_passages_give_an_empty_matrix_without_a_turn() -> None:
    model = GatedEmbedder()
    assert (await scheduler(model).embed_passages([])).shape == (0, model.dimension)
    assert model.calls == []


class ClosedEmbedder(HashEmbedder):
    """A model holding something to release, which records its closing."""

    def __init__(self) -> None:
        super().__init__()
        self.closed = 0

    async def close(self) -> None:
        self.closed += 1


async def test_closing_closes_the_model_it_wraps_when_that_holds_something() -> None:
    model = ClosedEmbedder()
    await scheduler(model).close()
    assert model.closed == 1
    await scheduler(GatedEmbedder()).close()  # a model with nothing to release

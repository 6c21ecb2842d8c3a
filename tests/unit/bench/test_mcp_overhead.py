"""The MCP benchmark times each call by the clock and by the processor time of its thread,
skips its warm-up, checks that every path found the same chunks, and gives its HTTP server a
tokens file that lets the bench's token search."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from retrieval.domain.tenants import Scope, Tenants, authorise, grants_from_json
from retrieval_bench.mcp_overhead import (
    Found,
    Timed,
    same_chunks,
    timed_calls,
    timed_ms,
    tokens_file,
)


def spin(seconds: float) -> None:
    """Keep the processor busy for ``seconds`` of this thread's processor time."""
    until = time.thread_time() + seconds
    while time.thread_time() < until:
        pass


async def busy() -> str:
    spin(0.05)
    return "done"


async def waiting() -> None:
    await asyncio.sleep(0.05)


async def test_a_call_is_timed_by_the_clock_and_by_the_processor() -> None:
    returned, _, busy_processor = await timed_ms(busy())
    _, waiting_wall, waiting_processor = await timed_ms(waiting())
    assert returned == "done"
    assert busy_processor >= 50
    assert waiting_wall >= 50
    assert waiting_processor < 25


async def test_the_warm_up_is_not_measured_and_each_answer_is_kept_in_order() -> None:
    asked = ["warm", "first", "second"]
    searched: list[str] = []
    measured: list[str] = []

    async def search(question: str) -> Found:
        searched.append(question)
        spin(0.01)
        return (f"{question}-chunk",)

    timed = await timed_calls(search, asked, 1, os.getpid(), lambda: measured.append("query"))
    assert searched == asked
    assert timed.found == [("first-chunk",), ("second-chunk",)]
    assert len(timed.clock_ms) == len(timed.thread_cpu_ms) == len(measured) == 2
    assert min(timed.thread_cpu_ms) >= 10


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

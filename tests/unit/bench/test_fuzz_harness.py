"""The fuzz harness counts every case, tells refusals from failures, stops hangs, and the
command fails when a target does."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from typer.testing import CliRunner

import retrieval_bench.cli.fuzz
from retrieval.cli.app import app
from retrieval.errors import InvalidRequestError
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target, run_targets


def target(check: Callable[[Runner, int], None], *, name: str = "fake") -> Target:
    @contextmanager
    def session(runner: Runner) -> Iterator[Check]:
        yield lambda case: check(runner, case)

    return Target(
        name=name,
        strategy=st.integers(0, 10_000),
        allowed=(InvalidRequestError,),
        session=session,
    )


def judged(runner: Runner, case: int) -> None:
    """Fine, refused at the boundary, a typed refusal, or an untyped crash."""
    if case % 4 == 1:
        raise RefusedError("boundary")
    if case % 4 == 2:
        raise InvalidRequestError("typed", field="case")
    if case % 4 == 3:
        raise KeyError(case)


def test_every_case_counts_and_only_untyped_errors_fail() -> None:
    seen: list[int] = []

    def check(runner: Runner, case: int) -> None:
        seen.append(case)
        judged(runner, case)

    report = run_targets([target(check)], cases=200, seed=3)
    (figures,) = report.targets
    assert figures.cases == len(seen) == 200
    assert figures.refused == sum(case % 4 in (1, 2) for case in seen)
    assert figures.failures == sum(case % 4 == 3 for case in seen) > 0
    assert figures.first is not None
    assert figures.first.example == repr(next(case for case in seen if case % 4 == 3))
    assert figures.first.error.startswith("KeyError")
    assert report.failed == [figures]
    shape = report.as_dict()["targets"]["fake"]
    assert (shape["cases"], shape["failures"]) == (200, figures.failures)


def sleeps(runner: Runner, case: int) -> None:
    runner.call(time.sleep, 30)


def awaits(runner: Runner, case: int) -> None:
    runner.run(asyncio.sleep(30))


def spins(runner: Runner, case: int) -> None:
    async def busy() -> None:
        while True:
            pass

    runner.run(busy())


@pytest.mark.parametrize("check", [sleeps, awaits, spins], ids=["sleeps", "awaits", "spins"])
def test_a_case_that_hangs_is_stopped_and_fails(check: Callable[[Runner, int], None]) -> None:
    begun = time.monotonic()
    report = run_targets([target(check)], cases=2, timeout_s=0.2)
    (figures,) = report.targets
    assert figures.failures == figures.cases == 2
    assert figures.first is not None
    assert figures.first.error.startswith("HangError: still running after")
    assert time.monotonic() - begun < 10


def test_the_command_fails_and_shows_the_first_failing_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(runner: Runner, case: Any) -> None:
        raise ValueError("untyped")

    def calm(runner: Runner, case: Any) -> None:
        if case % 2:
            raise InvalidRequestError("typed", field="case")

    monkeypatch.setattr(
        retrieval_bench.cli.fuzz,
        "TARGETS",
        {"calm": target(calm, name="calm"), "broken": target(fails, name="broken")},
    )
    arguments = ["bench", "fuzz", "--cases", "20", "--workers", "1", "--reports", str(tmp_path)]
    result = CliRunner().invoke(app, arguments, env={"COLUMNS": "200"})
    assert result.exit_code == 1, result.output
    assert "broken: 20 failing cases; the first:" in result.output
    assert "ValueError: untyped" in result.output
    report = json.loads((tmp_path / "fuzz.json").read_text())
    assert report["targets"]["broken"]["failures"] == 20
    assert report["targets"]["calm"]["cases"] == 20
    only = CliRunner().invoke(app, [*arguments, "--target", "calm"], env={"COLUMNS": "200"})
    assert only.exit_code == 0, only.output
    assert set(json.loads((tmp_path / "fuzz.json").read_text())["targets"]) == {"calm"}

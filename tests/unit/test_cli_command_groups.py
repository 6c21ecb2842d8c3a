"""Command groups other packages install under the ``retrieval.cli`` entry points: the
benchmarks' ``bench`` is listed and run like a command of the product's own, and without it
``retrieval`` answers as before, with no ``bench``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import retrieval.cli.app
from retrieval.cli.app import app

BENCH_COMMANDS = (
    "latency", "beir", "peers", "grpc", "crash", "fuzz", "ingest", "index", "scaling",
    "report", "load", "concurrency", "profile", "cli", "replicas",
)  # fmt: skip


def invoke(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(arguments), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def test_the_installed_bench_group_is_listed_and_answers_with_every_benchmark() -> None:
    listed, overview = invoke("--help")
    asked, bench = invoke("bench", "--help")

    assert (listed, asked) == (0, 0)
    assert "bench " in overview
    assert "Benchmarks" in overview
    assert " bench [OPTIONS] COMMAND [ARGS]" in bench
    assert [name for name in BENCH_COMMANDS if f" {name} " not in bench] == []


def test_without_an_installed_group_the_command_line_answers_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(retrieval.cli.app, "installed_groups", dict)

    listed, overview = invoke("--help")
    refused, message = invoke("bench", "latency")

    assert listed == 0
    assert "query" in overview
    assert "bench" not in overview
    assert refused == 2
    assert "No such command 'bench'" in message

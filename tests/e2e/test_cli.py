"""The command line end to end: separate processes sharing one data directory."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_testkit import ChatRequest, OpenAiStandIn
from retrieval_testkit.openai_standin import Fault

CLI = Path(sys.executable).with_name("retrieval")

FROST = """---
document_id: frost-protection
title: Frost protection
domain: weather_patterns
region: nilgiris
---
# Frost protection

Ground frost scorches the plucking table of tea bushes on clear, still winter nights.
Growers cover young bushes with grass thatch and keep shade trees to hold warmth.
"""

RUST = {
    "documents": [
        {
            "document_id": "red-rust",
            "title": "Red rust",
            "domain": "plant_diseases",
            "content": "Red rust is an algal disease (Cephaleuros) of stressed tea bushes, "
            "showing orange patches on stems and leaves during wet weather.",
            "metadata": {"region": "assam"},
        }
    ]
}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    (root / "docs").mkdir()
    (root / "docs" / "frost.md").write_text(FROST)
    (root / "docs" / "rust.json").write_text(json.dumps(RUST))
    return root


def cli_environment(workspace: Path, environment: dict[str, str] | None) -> dict[str, str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(workspace / "data"),
        "RETRIEVAL_LOG_FORMAT": "json",
        "COLUMNS": "200",
        **(environment or {}),
    }
    env.pop("RETRIEVAL_MONGODB_URI", None)
    return env


def run(
    workspace: Path, *args: str, environment: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = cli_environment(workspace, environment)
    return subprocess.run(
        [str(CLI), *args], cwd=workspace, env=env, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def readable(workspace: Path) -> str:
    """A namespace holding both documents, written once for the tests that only read it."""
    ingested = run(workspace, "ingest", "docs", "--namespace", "e2e-read")
    assert ingested.returncode == 0, ingested.stderr
    return "e2e-read"


def test_ingest_query_stats_across_processes(workspace: Path) -> None:
    ingested = run(workspace, "ingest", "docs", "--namespace", "e2e")
    assert ingested.returncode == 0, ingested.stderr
    assert "2 documents" in ingested.stdout
    assert "2 created" in ingested.stdout

    answered = run(
        workspace, "-v", "query", "How do I protect bushes from frost?", "-n", "e2e", "-k", "1"
    )
    assert answered.returncode == 0, answered.stderr
    assert "frost-protection" in answered.stdout
    assert "red-rust" not in answered.stdout
    log = [json.loads(line) for line in answered.stderr.splitlines() if line.startswith("{")]
    done = next(entry for entry in log if entry["event"] == "retrieve.done")
    assert done["correlation_id"]
    assert done["total_ms"] > 0

    filtered = run(workspace, "query", "frost on bushes", "-n", "e2e", "-d", "plant_diseases")
    assert filtered.returncode == 0, filtered.stderr
    assert '"level": "info"' not in ingested.stderr + filtered.stderr, "info logs need -v"
    assert "red-rust" in filtered.stdout
    assert "frost-protection" not in filtered.stdout

    stats = run(workspace, "stats", "--json")
    assert stats.returncode == 0, stats.stderr
    report = json.loads(stats.stdout)
    assert (report["status"], report["reasons"]) == ("green", [])
    [namespace] = report["namespaces"]
    assert namespace["namespace"] == "e2e"
    assert namespace["vector_count"] == namespace["chunk_count"] == report["total_chunk_count"]
    assert {footprint["store"] for footprint in report["footprints"]} == {
        "vector index (exact)",
        "keyword index (bm25)",
        "mongodb (embedded)",
    }
    assert all(footprint["disk_bytes"] > 0 for footprint in report["footprints"])


def test_query_options_choose_the_searches(workspace: Path, readable: str) -> None:
    asked = ("query", "frost on tea bushes", "-n", readable, "--json")
    keyword = run(workspace, *asked, "--mode", "keyword")
    assert keyword.returncode == 0, keyword.stderr
    matches = json.loads(keyword.stdout)["matches"]
    assert matches[0]["document_id"] == "frost-protection"
    assert all(match["scores"] == {"keyword": match["score"]} for match in matches)
    hybrid = run(workspace, *asked, "--fusion", "rrf", "--max-per-document", "1")
    assert hybrid.returncode == 0, hybrid.stderr
    fused = json.loads(hybrid.stdout)["matches"]
    assert {"dense", "fused"} <= fused[0]["scores"].keys()
    assert len({match["document_id"] for match in fused}) == len(fused)


def test_reingesting_reports_unchanged(workspace: Path) -> None:
    again = run(workspace, "ingest", "docs", "--namespace", "e2e-twice")
    assert again.returncode == 0, again.stderr
    repeat = run(workspace, "ingest", "docs", "--namespace", "e2e-twice")
    assert repeat.returncode == 0, repeat.stderr
    assert "2 unchanged" in repeat.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("query", "tea", "-d", "coffee"), 2, "domain coffee is not in RETRIEVAL_ALLOWED_DOMAINS"),
        (("query", "tea", "-n", "never-written"), 1, "does not exist"),
        (("query", "tea", "-k", "0"), 2, "top_k"),
        (("query", "tea", "--mmr-lambda", "2"), 2, "mmr_lambda"),
    ],
)
def test_bad_input_is_a_clear_error_not_a_traceback(
    workspace: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    """Refused before anything starts (code 2), or by the running service (1), on stderr."""
    result = run(
        workspace, *args, environment={"RETRIEVAL_ALLOWED_DOMAINS": '["weather_patterns"]'}
    )
    assert result.returncode == code
    assert message in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_a_file_that_cannot_be_read_is_reported_and_counted(workspace: Path) -> None:
    result = run(workspace, "ingest", "missing.md")
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        "failed missing.md: no such file or directory",
        "0 files, 0 documents, 0 chunks: 1 failed",
    ]


def test_the_demo_ingests_the_knowledge_base_and_answers(workspace: Path) -> None:
    """Whatever domains the user allows: the demo allows its own too."""
    shown = run(
        workspace,
        "demo",
        "--namespace",
        "e2e-demo",
        environment={"RETRIEVAL_ALLOWED_DOMAINS": '["software_docs"]'},
    )
    assert shown.returncode == 0, shown.stderr
    assert "6 documents" in shown.stdout
    assert "blister-blight-management" in shown.stdout
    assert "max_per_document 1" in shown.stdout


def answer_from_the_first_passage(request: ChatRequest) -> str:
    context = request.messages[-1].content
    assert "Question: How do I protect bushes from frost?" in context
    return "Cover young bushes with grass thatch [1]."


def test_ask_answers_from_the_context_with_citations(workspace: Path, readable: str) -> None:
    with OpenAiStandIn(model="tea-model", reply=answer_from_the_first_passage) as llm:
        answered = run(
            workspace,
            "ask",
            "How do I protect bushes from frost?",
            "-n",
            readable,
            "--json",
            environment={
                "RETRIEVAL_LLM_BASE_URL": llm.base_url,
                "RETRIEVAL_LLM_MODEL": "tea-model",
            },
        )
    assert answered.returncode == 0, answered.stderr
    answer = json.loads(answered.stdout)
    assert answer["answer"] == "Cover young bushes with grass thatch [1]."
    assert answer["confidence"] == 1.0
    [citation] = answer["citations"]
    assert (citation["number"], citation["document_id"]) == (1, "frost-protection")
    assert citation["chunk_id"].startswith("frost-protection#")


async def test_ask_prints_the_answer_as_the_model_writes_it_then_its_citations(
    workspace: Path, readable: str
) -> None:
    with OpenAiStandIn(model="tea-model", reply=answer_from_the_first_passage) as llm:
        llm.inject(Fault(hold_after=1))
        model = {"RETRIEVAL_LLM_BASE_URL": llm.base_url, "RETRIEVAL_LLM_MODEL": "tea-model"}
        asking = await asyncio.create_subprocess_exec(
            str(CLI),
            *("ask", "How do I protect bushes from frost?", "-n", readable),
            cwd=workspace,
            env=cli_environment(workspace, model),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert asking.stdout is not None
        first = await asyncio.wait_for(asking.stdout.readexactly(len(b"Cover ")), timeout=120)
        assert asking.returncode is None, "the model is held after its first piece"
        llm.release()
        rest, errors = await asyncio.wait_for(asking.communicate(), timeout=120)
    assert asking.returncode == 0, errors.decode()
    assert [request.body["stream"] for request in llm.requests] == [True]
    printed = (first + rest).decode()
    assert printed.startswith("Cover young bushes with grass thatch [1].\n\n[1] Frost protection")
    assert "confidence 1.00 · tea-model" in printed


def test_ask_without_a_language_model_says_what_to_set(workspace: Path, readable: str) -> None:
    refused = run(workspace, "ask", "frost", "-n", readable)
    assert refused.returncode == 1
    assert "RETRIEVAL_LLM_BASE_URL" in refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr

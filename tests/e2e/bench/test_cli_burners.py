"""The CPU burners ``retrieval bench cli`` times commands beside: child processes that spin
until the timing ends, killed also when it fails."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import typer

from retrieval_bench.cli.command_line import cpu_burners


def cpu_ticks(pid: int) -> int:
    """User and system clock ticks the process has run for (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_the_burners_spin_until_the_block_ends() -> None:
    with cpu_burners(2) as burners:
        assert len(burners) == 2
        before = [cpu_ticks(burner.pid) for burner in burners]
        time.sleep(0.5)
        assert all(
            cpu_ticks(burner.pid) > ticks for burner, ticks in zip(burners, before, strict=True)
        )
        assert all(burner.poll() is None for burner in burners)
    assert all(burner.returncode is not None for burner in burners)


def test_the_burners_are_killed_when_the_timing_fails() -> None:
    with pytest.raises(typer.Exit), cpu_burners(2) as burners:
        raise typer.Exit(code=1)
    assert [burner.returncode for burner in burners] == [-9, -9]

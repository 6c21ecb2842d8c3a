"""``retrieval bench ...``: benchmark commands that print their figures and write reports/."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="Benchmarks: figures printed and written to reports/.")

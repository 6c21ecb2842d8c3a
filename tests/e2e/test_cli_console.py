"""``retrieval console`` as a command: it loads no web framework until it runs, and refuses an
interface beyond loopback without tokens before starting anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

COMMAND = """
import sys
import typer
from retrieval.cli.console import console
loaded = sorted({"starlette", "uvicorn", "jinja2"} & set(sys.modules))
assert not loaded, loaded
app = typer.Typer()
app.command()(console)
app()
"""


def test_the_command_refuses_a_public_interface_without_tokens(tmp_path: Path) -> None:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("RETRIEVAL_")
    } | {"RETRIEVAL_DATA_DIR": str(tmp_path / "data")}
    ran = subprocess.run(
        [sys.executable, "-c", COMMAND, "--host", "0.0.0.0", "--port", "0"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 1, ran.stderr
    assert "refusing to serve the console on 0.0.0.0" in ran.stderr
    assert not (tmp_path / "data").exists()

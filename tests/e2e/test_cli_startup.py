"""The command line answers at once when it starts nothing: importing it loads no store and no
model, a refused request or a bad setting is one line and exit code 2, and the library stays
quiet until the application configures logging. Separate processes, none starting a store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = Path(sys.executable).with_name("retrieval")
HEAVY = ("dependency_injector", "pymongo", "numpy", "secantus", "bm25s", "grpc", "faiss")
LOADED_AFTER = """
import json, sys
loaded = {}
for module in sys.argv[1].split(","):
    __import__(module)
    loaded[module] = sorted({name.split(".")[0] for name in sys.modules} & set(sys.argv[2:]))
print(json.dumps(loaded))
"""


def environment(tmp_path: Path, **settings: str) -> dict[str, str]:
    kept = {name: value for name, value in os.environ.items() if not name.startswith("RETRIEVAL_")}
    return kept | {"RETRIEVAL_DATA_DIR": str(tmp_path / "data"), **settings}


def retrieval(tmp_path: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *args],
        cwd=tmp_path,
        env=environment(tmp_path, **settings),
        capture_output=True,
        text=True,
        timeout=60,
    )


def loaded_after(modules: tuple[str, ...], heavy: tuple[str, ...]) -> dict[str, list[str]]:
    """Which of ``heavy`` are loaded after importing each of ``modules`` in turn."""
    shown = subprocess.run(
        [sys.executable, "-c", LOADED_AFTER, ",".join(modules), *heavy],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def test_importing_the_package_or_the_command_line_loads_no_store_nor_model() -> None:
    modules = ("retrieval", "retrieval.cli.app")
    assert loaded_after(modules, HEAVY) == {module: [] for module in modules}


def test_a_command_sent_to_a_running_server_loads_no_store_nor_model() -> None:
    modules = ("retrieval.grpc.client", "retrieval.cli.served")
    stores = ("dependency_injector", "pymongo", "secantus", "bm25s", "faiss")
    assert loaded_after(modules, stores) == {module: [] for module in modules}


@pytest.mark.parametrize(
    ("args", "settings", "message"),
    [
        pytest.param(
            ("query", "tea", "--top-k", "0"),
            {},
            "error: top_k: Input should be greater than or equal to 1",
            id="top-k",
        ),
        pytest.param(
            ("query", "tea", "--domain", "not_allowed"),
            {"RETRIEVAL_ALLOWED_DOMAINS": '["plant_diseases"]'},
            "error: domains: domain not_allowed is not in RETRIEVAL_ALLOWED_DOMAINS",
            id="domain",
        ),
    ],
)
def test_a_refused_request_is_one_line_before_anything_starts(
    tmp_path: Path, args: tuple[str, ...], settings: dict[str, str], message: str
) -> None:
    refused = retrieval(tmp_path, *args, **settings)

    assert refused.returncode == 2
    assert refused.stdout == ""
    [line] = refused.stderr.splitlines()
    assert line.startswith(message)
    assert not (tmp_path / "data").exists(), "no store was started"


@pytest.mark.parametrize("command", [("query", "tea"), ("serve",)])
def test_a_bad_setting_names_its_variable_in_one_line(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    failed = retrieval(tmp_path, *command, RETRIEVAL_ALLOWED_DOMAINS="software_docs")

    assert failed.returncode == 2
    [line] = failed.stderr.splitlines()
    assert line.startswith("error: RETRIEVAL_ALLOWED_DOMAINS: ")
    assert "must be a JSON list" in line
    assert line.endswith("(got 'software_docs')")
    assert "Traceback" not in failed.stdout + failed.stderr


def test_the_library_logs_warnings_on_stderr_and_nothing_below() -> None:
    logged = subprocess.run(
        [
            sys.executable,
            "-c",
            "import structlog, retrieval.logging\n"
            "log = structlog.get_logger('library')\n"
            "log.debug('library.debug'); log.info('library.info'); log.warning('library.warning')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert logged.returncode == 0, logged.stderr
    assert logged.stdout == ""
    assert "library.warning" in logged.stderr
    assert "library.info" not in logged.stderr
    assert "library.debug" not in logged.stderr

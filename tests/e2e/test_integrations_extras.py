"""The framework retrievers are optional extras: neither importing the package nor the
command line's help loads a framework, and an integration whose framework is missing says
which extra installs it. Separate processes, each with its own modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

FRAMEWORKS = ("langchain", "langchain_core", "langchain_classic", "llama_index")
FRAMEWORKS_LOADED = """
import json, sys
frameworks = set(sys.argv[1:])
import retrieval, retrieval.integrations
from retrieval.cli.app import main
sys.argv = ["retrieval", "--help"]
try:
    main()
except SystemExit as done:
    assert not done.code, done.code
loaded = {name.split(".")[0] for name in sys.modules} & frameworks
print(json.dumps(sorted(loaded)), file=sys.stderr)
"""
WITHOUT = """
import sys
sys.modules[sys.argv[1]] = None
import retrieval.integrations.{module}
"""


def python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60
    )


def test_neither_the_package_nor_the_command_lines_help_loads_a_framework() -> None:
    shown = python(FRAMEWORKS_LOADED, *FRAMEWORKS)

    assert shown.returncode == 0, shown.stderr
    assert "Usage: retrieval" in shown.stdout
    assert json.loads(shown.stderr.splitlines()[-1]) == []


@pytest.mark.parametrize(
    ("module", "framework"), [("langchain", "langchain_core"), ("llamaindex", "llama_index")]
)
def test_an_integration_without_its_framework_names_the_extra_to_install(
    module: str, framework: str
) -> None:
    shown = python(WITHOUT.format(module=module), framework)

    assert shown.returncode == 1
    assert shown.stderr.splitlines()[-1] == (
        f"ImportError: retrieval.integrations.{module} needs {framework}: "
        f"pip install 'retrieval-service[{module}]'"
    )

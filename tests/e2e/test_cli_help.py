"""Every command's help, read in an 80-column terminal: option names and their values whole,
no type shown on a flag, and the commands' sentences not broken mid-line; printed without
loading Pydantic or rich's Markdown."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys

import pytest
import typer
from typer.core import TyperGroup

from retrieval.cli.app import app, installed_groups

COLUMNS = 80
END_OF_HELP = "\x00"
SHOW_EVERY_HELP = f"""
import json, sys
from retrieval.cli.app import main
for command in json.loads(sys.argv[1]):
    sys.argv = ["retrieval", *command, "--help"]
    try:
        main()
    except SystemExit as exit:
        assert exit.code in (0, None), (command, exit.code)
    print({END_OF_HELP!r}, flush=True)
"""
"""The entry point's ``main`` as the ``retrieval`` script calls it, for every command in one
process: the helps are printed as each command's own process prints it, at one start."""


def commands(group: TyperGroup, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The command paths of ``group`` and of its groups, the group itself first."""
    found = [path]
    context = typer.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        if isinstance(command, TyperGroup):
            found.extend(commands(command, (*path, name)))
        else:
            found.append((*path, name))
    return found


COMMANDS = commands(typer.main.get_group(app))
PRODUCT_COMMANDS = [path for path in COMMANDS if not path or path[0] not in installed_groups()]
"""The commands but those of the installed groups (the benchmarks), which are not the product."""
NOT_LOADED_FOR_HELP = ("pydantic", "rich.markdown")
LOADED_AT_EXIT = """
import atexit, json, sys
watched = json.loads(sys.argv[1])
loaded = lambda: [name for name in watched if name in sys.modules]
atexit.register(lambda: print(json.dumps(loaded()), file=sys.stderr))
from retrieval.cli.app import main
sys.argv = ["retrieval", *json.loads(sys.argv[2]), "--help"]
main()
"""
"""The entry point's ``main`` printing one command's help, then which of the watched modules
were loaded, as the last line of stderr."""


@pytest.fixture(scope="module")
def helps() -> dict[tuple[str, ...], str]:
    """Each command's help as the command line prints it in an 80-column terminal."""
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_EVERY_HELP, json.dumps(COMMANDS)],
        env=os.environ | {"COLUMNS": str(COLUMNS), "TERM": "xterm-256color"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    printed = shown.stdout.split(f"{END_OF_HELP}\n")
    assert printed[-1] == "", shown.stdout
    return dict(zip(COMMANDS, printed[:-1], strict=True))


def test_every_command_is_checked() -> None:
    assert {("query",), ("sync",), ("golden", "run"), ("serve",)} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda path: " ".join(path) or "retrieval")
def test_help_fits_80_columns_with_every_option_whole(
    helps: dict[tuple[str, ...], str], command: tuple[str, ...]
) -> None:
    shown = helps[command]
    group = typer.main.get_group(app)
    context = typer.Context(group)
    described = group
    for name in command:
        described = described.get_command(context, name)
    assert all(len(line) <= COLUMNS for line in shown.splitlines()), shown
    assert "…" not in shown
    assert not re.search(r"[a-z]\.\.\.$", shown, re.M), "a command's help cut short"
    assert "<bool>" not in shown
    assert "\\[" not in shown
    for line in shown.splitlines():
        assert not re.search(r"<[\w|.\[\]-]*$", line), f"a value split across lines: {line!r}"
    for parameter in described.params:
        if parameter.param_type_name != "option":
            continue
        for name in [*parameter.opts, *parameter.secondary_opts]:
            assert re.search(rf"(^|[\s,/]){re.escape(name)}($|[\s,=<\[])", shown, re.M), name


@pytest.mark.parametrize(
    "command", PRODUCT_COMMANDS, ids=lambda path: " ".join(path) or "retrieval"
)
def test_help_loads_neither_pydantic_nor_rich_markdown(command: tuple[str, ...]) -> None:
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            LOADED_AT_EXIT,
            json.dumps(NOT_LOADED_FOR_HELP),
            json.dumps(command),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("Usage: retrieval")
    assert json.loads(shown.stderr.splitlines()[-1]) == []


def test_top_level_help_gives_each_command_its_first_sentence_wrapped_not_broken(
    helps: dict[tuple[str, ...], str],
) -> None:
    shown = helps[()]
    listed = [line.rstrip(" │") for line in shown.split("Commands", 1)[1].splitlines()[1:]]
    for line, following in itertools.pairwise(listed):
        words = following.strip(" │").split()
        if line.strip(" │") and words and words[0] not in NAMES:
            assert len(line) + 1 + len(words[0]) > COLUMNS - 4, f"broken early: {line!r}"
    text = " ".join(" ".join(line.strip(" │") for line in listed).split())
    group = typer.main.get_group(app)
    context = typer.Context(group)
    for name in NAMES:
        help_text = group.get_command(context, name).help or ""
        first = " ".join(re.split(r"\.\s", help_text, maxsplit=1)[0].split())
        assert first in text, name


NAMES = {path[0] for path in COMMANDS if path}

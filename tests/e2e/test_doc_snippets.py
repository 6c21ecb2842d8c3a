"""Every ```python block of the README and docs/ runs against the real stores and model.

A file's blocks run in order in one namespace (as ``__main__``): a block with a top-level
``await`` on the test's event loop, any other in a thread of its own, where ``asyncio.run``
works. They run in a working directory holding the files they read, with a language model
stand-in configured, and a ``retrieval serve`` on a free port whose data directory is
``server-data``: the blocks find it by the address it records there, never by a fixed port.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from retrieval_testkit import ChatRequest, OpenAiStandIn
from retrieval_testkit.served_process import serve_environment, served_process

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<code>.*?)^```$", re.MULTILINE | re.DOTALL)
SERVER_DATA = "server-data"
FIXED_PORT = re.compile(r"(localhost|127\.0\.0\.1|0\.0\.0\.0|\]):\d+")
FILES = {
    "docs/keys.md": "---\ntitle: Rotating API keys\n---\n# Rotating API keys\n\n## Steps\n\n"
    "Create a new API key in the console, deploy it to every service, then revoke the old "
    "key. Keys older than ninety days are flagged by the nightly audit.\n",
    "docs/ops/backups.md": "# Backups\n\nThe database is backed up every night at two; a "
    "restore from the latest backup takes about twenty minutes.\n",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    code: str


def python_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, fence.start()) + 2, fence["code"])
        for fence in FENCE.finditer(text)
        if fence["info"].strip() == "python"
    ]


WITH_PYTHON = [path for path in DOCUMENTS if python_blocks(path)]


def test_every_python_block_is_one_the_runner_runs() -> None:
    hidden = {
        (path.name, fence["info"].strip())
        for path in DOCUMENTS
        for fence in FENCE.finditer(path.read_text(encoding="utf-8"))
        if re.match(r"(py|ipython)", fence["info"].strip()) and fence["info"].strip() != "python"
    }
    assert not hidden, f"only ```python blocks run: {sorted(hidden)}"


def answer_citing_the_first_passage(request: ChatRequest) -> str:
    assert "Question:" in request.messages[-1].content
    return "Deploy a new key to every service, then revoke the old one [1]."


@pytest.fixture
def workspace(tmp_path: Path, mongo_uri: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A working directory with the files the snippets read; the stores and the language
    model they reach are configured in the environment, as a user's would be."""
    work = tmp_path / "work"
    for name, text in FILES.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(work)
    for variable in ("RETRIEVAL_ALLOWED_DOMAINS", "RETRIEVAL_DEFAULT_NAMESPACE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("RETRIEVAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RETRIEVAL_MONGODB_URI", mongo_uri)
    monkeypatch.setenv("RETRIEVAL_MONGODB_DATABASE", f"docs_{uuid.uuid4().hex[:12]}")
    with OpenAiStandIn(model="docs-model", reply=answer_citing_the_first_passage) as llm:
        monkeypatch.setenv("RETRIEVAL_LLM_BASE_URL", llm.base_url)
        monkeypatch.setenv("RETRIEVAL_LLM_MODEL", "docs-model")
        yield tmp_path


def test_no_python_block_names_a_fixed_port() -> None:
    fixed = [
        f"{block.path.name}:{block.line}: {found[0]}"
        for path in WITH_PYTHON
        for block in python_blocks(path)
        if (found := FIXED_PORT.search(block.code))
    ]
    assert not fixed, "a shared machine may run another server there: " + ", ".join(fixed)


@pytest.fixture
async def served(workspace: Path) -> AsyncIterator[None]:
    """``retrieval serve`` on a free port, on stores of its own in the working directory's
    ``server-data``, with the language model stand-in."""
    work = Path.cwd()
    async with served_process(work, serve_environment(work / SERVER_DATA)):
        yield


@pytest.mark.usefixtures("served")
@pytest.mark.parametrize("path", WITH_PYTHON, ids=lambda path: path.name)
async def test_the_python_blocks_run_in_order(path: Path) -> None:
    namespace: dict[str, object] = {"__name__": "__main__"}
    for block in python_blocks(path):
        where = f"{path.relative_to(ROOT)}:{block.line}"
        code = compile(block.code, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        if code.co_flags & inspect.CO_COROUTINE:
            await eval(code, namespace)
        else:
            await asyncio.to_thread(exec, code, namespace)

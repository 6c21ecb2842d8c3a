"""Commands run while ``retrieval serve`` holds the data directory send their requests to it,
instead of stopping because the directory is in use."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from retrieval.grpc.serving_record import serving_record
from retrieval_testkit import OpenAiStandIn
from retrieval_testkit.openai_standin import Fault
from retrieval_testkit.served_process import serve_environment, served_process

CLI = Path(sys.executable).with_name("retrieval")
NOTE = """---
title: Key rotation
domain: software_docs
---
# Key rotation

Rotate an API key from the account page: create the new key, deploy it, revoke the old one.
"""
REFUSED = "---\ntitle: Refused\ndomain: software_docs\nposition: 3\n---\nA reserved key.\n"
ANSWER = "Create the new key, deploy it, then revoke the old one [1]."


async def started(data: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        str(CLI),
        *args,
        cwd=data.parent,
        env=os.environ | {"RETRIEVAL_DATA_DIR": str(data), "COLUMNS": "120"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def cli(data: Path, *args: str) -> tuple[int, str, str]:
    process = await started(data, *args)
    out, err = await process.communicate()
    return process.returncode or 0, out.decode(), err.decode()


async def test_commands_are_answered_by_the_server_holding_the_data_directory(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "keys.md").write_text(NOTE)
    (tmp_path / "kb" / "refused.md").write_text(REFUSED)
    async with served_process(tmp_path, serve_environment(data)) as served:
        record = serving_record(data)
        assert record is not None
        assert record.address == served.address

        code, out, err = await cli(data, "ingest", "kb", "-n", "docs")
        assert code == 1, err
        assert "1 created" in out
        assert "failed document 'refused'" in out
        assert "position" in out + err

        code, out, err = await cli(data, "query", "how do I rotate a key", "-n", "docs", "--json")
        assert code == 0, err
        assert json.loads(out)["matches"][0]["title"] == "Key rotation"

        code, out, err = await cli(data, "documents", "-n", "docs", "--json")
        assert code == 0, err
        (listed,) = json.loads(out)
        assert listed["source"].endswith("kb/keys.md")

        code, out, err = await cli(data, "stats", "--json")
        assert code == 0, err
        assert "docs" in out

        code, out, err = await cli(data, "delete", listed["document_id"], "-n", "docs", "--json")
        assert code == 0, err
        code, out, err = await cli(data, "documents", "-n", "docs", "--json")
        assert json.loads(out) == []
    assert serving_record(data) is None


async def test_ask_prints_the_servers_answer_as_its_model_writes_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "keys.md").write_text(NOTE)
    question = ("how do I rotate a key", "-n", "docs")
    with OpenAiStandIn(model="served-model", reply=lambda request: ANSWER) as llm:
        model = {"RETRIEVAL_LLM_BASE_URL": llm.base_url, "RETRIEVAL_LLM_MODEL": "served-model"}
        async with served_process(tmp_path, serve_environment(data, **model)):
            code, out, err = await cli(data, "ingest", "kb", "-n", "docs")
            assert code == 0, err

            llm.inject(Fault(hold_after=1))
            asking = await started(data, "ask", *question)
            assert asking.stdout is not None
            first = await asyncio.wait_for(asking.stdout.readexactly(len(b"Create ")), 60)
            assert asking.returncode is None, "the model is held after its first piece"
            llm.release()
            rest, errors = await asyncio.wait_for(asking.communicate(), 60)
            assert asking.returncode == 0, errors.decode()
            assert (first + rest).decode().startswith(f"{ANSWER}\n\n[1] Key rotation")

            code, out, err = await cli(data, "ask", *question, "--json")
            assert code == 0, err
            answered = json.loads(out)
            assert (answered["answer"], answered["model"]) == (ANSWER, "served-model")
            assert [citation["title"] for citation in answered["citations"]] == ["Key rotation"]
    assert [request.body["stream"] for request in llm.requests] == [True, False]

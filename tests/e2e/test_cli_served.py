"""Commands run while ``retrieval serve`` holds the data directory send their requests to it,
instead of stopping because the directory is in use."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from retrieval.grpc.serving_record import serving_record
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


async def cli(data: Path, *args: str) -> tuple[int, str, str]:
    process = await asyncio.create_subprocess_exec(
        str(CLI),
        *args,
        cwd=data.parent,
        env=os.environ | {"RETRIEVAL_DATA_DIR": str(data), "COLUMNS": "120"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
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
        assert "failed refused" in out
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

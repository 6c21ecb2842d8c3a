"""A read (`documents`, `stats`, `query`, `validate`) or a dry run (`reconcile`, `sync`,
`delete`) changes nothing: a write a killed process left stays as it was until a command
that may change the stores starts. The chunk texts and the ledger are on the session's
MongoDB wire server, so the test reads them before and after each command."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pymongo import AsyncMongoClient

from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease
from retrieval.service.ingestion.leases import this_host

CLI = Path(sys.executable).with_name("retrieval")
NAMESPACE = "farm"
FROST = """# Frost protection

Ground frost scorches the plucking table of tea bushes on clear, still winter nights.
"""
CASES = """{"cases": [{"query": "frost on tea bushes", "expected_document_ids": ["frost"]}]}"""


def run(root: Path, mongo_uri: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = os.environ | {
        "RETRIEVAL_DATA_DIR": str(root / "data"),
        "RETRIEVAL_MONGODB_URI": mongo_uri,
        "RETRIEVAL_MONGODB_DATABASE": database(root),
    }
    return subprocess.run(
        [str(CLI), *args], cwd=root, env=env, capture_output=True, text=True, timeout=180
    )


def database(root: Path) -> str:
    return f"unchanged_{root.name}"


def dead_pid() -> int:
    """The process id of a process of this host that has ended."""
    process = subprocess.Popen([sys.executable, "-c", ""])
    process.wait()
    return process.pid


async def stored(root: Path, mongo_uri: str) -> list[dict]:
    """Every ledger record and chunk text of the database, in a stable order."""
    async with AsyncMongoClient(mongo_uri) as client:
        found = []
        for name in ("documents", "chunks"):
            collection = client[database(root)][name]
            found += await collection.find({}, {"_id": False}).sort("chunk_id").to_list(None)
        return sorted(found, key=repr)


async def leave_a_write(root: Path, mongo_uri: str) -> None:
    """A document PENDING under the lease of a writer of this host that was killed."""
    async with AsyncMongoClient(mongo_uri) as client:
        ledger = MongoDocumentLedger(client[database(root)]["documents"])
        lease = Lease(owner="killed-writer", host=this_host(), pid=dead_pid())
        await ledger.claim(NAMESPACE, ["left"], lease)
        pending = DocumentRecord(
            namespace=NAMESPACE,
            document_id="left",
            state=DocumentState.PENDING,
            chunk_ids=("left#0",),
        )
        await ledger.save([pending], lease)


@pytest.mark.timeout(600)
def test_reads_and_dry_runs_leave_a_left_write_for_a_command_that_may_change_things(
    tmp_path: Path, mongo_uri: str
) -> None:
    (tmp_path / "frost.md").write_text(FROST)
    (tmp_path / "cases.json").write_text(CASES)
    ingested = run(
        tmp_path, mongo_uri, "ingest", "frost.md", "-n", NAMESPACE, "--domain", "weather_patterns"
    )
    assert ingested.returncode == 0, ingested.stderr
    asyncio.run(leave_a_write(tmp_path, mongo_uri))
    before = asyncio.run(stored(tmp_path, mongo_uri))

    for command in (
        ["documents", "-n", NAMESPACE],
        ["stats", "--json"],
        ["query", "frost", "-n", NAMESPACE, "--json"],
        ["validate", "-n", NAMESPACE, "--cases", "cases.json"],
        ["reconcile", "-n", NAMESPACE, "--dry-run"],
        ["sync", "frost.md", "-n", NAMESPACE, "--domain", "weather_patterns", "--dry-run"],
        ["delete", "frost", "-n", NAMESPACE, "--dry-run"],
    ):
        run(tmp_path, mongo_uri, *command)
        assert asyncio.run(stored(tmp_path, mongo_uri)) == before, command

    repaired = run(tmp_path, mongo_uri, "reconcile", "-n", NAMESPACE)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    left = [r for r in asyncio.run(stored(tmp_path, mongo_uri)) if r.get("document_id") == "left"]
    assert left == []

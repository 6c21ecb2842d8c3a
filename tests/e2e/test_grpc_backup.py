"""Backup and restore over gRPC, against a real loopback server on the test kit's in-memory
stores: the file a client receives is the one the server would write, a restore sent from it
brings the namespace back, and both need the admin scope on the namespace."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from retrieval.domain.tenants import token_digest
from retrieval.errors import BackupFileError, NotFoundError, PermissionDeniedError
from retrieval.grpc import GrpcSettings, RetrievalClient, backup_transfer, create_server
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.estate_notes import estate_notes

NS = "garden"
NOTES = estate_notes(6)
TOKENS = {
    "ops": ("ops-secret", ["*"], ["admin"]),
    "garden-ops": ("garden-ops-secret", ["garden-*"], ["admin"]),
    "writer": ("writer-secret", ["*"], ["read", "write"]),
}


@pytest.fixture
async def application(tmp_path: Path) -> AsyncIterator[Application]:
    settings = Settings(data_dir=tmp_path / "data")
    async with running(settings, in_memory_container(settings)) as app:
        await app.ingestion.ingest(NOTES, NS)
        yield app


@pytest.fixture
async def address(application: Application, tmp_path: Path) -> AsyncIterator[str]:
    path = tmp_path / "tokens.json"
    path.write_text(
        json.dumps(
            [
                {"name": name, "sha256": token_digest(secret), "namespaces": ns, "scopes": scopes}
                for name, (secret, ns, scopes) in TOKENS.items()
            ]
        )
    )
    server, port = await create_server(application, "127.0.0.1:0", GrpcSettings(tokens_file=path))
    yield f"127.0.0.1:{port}"
    await server.stop(None)


def client(address: str, name: str) -> RetrievalClient:
    return RetrievalClient.connect(address, token=SecretStr(TOKENS[name][0]), timeout=60)


async def test_a_backup_received_restores_the_namespace_elsewhere(
    application: Application, address: str, tmp_path: Path
) -> None:
    file = tmp_path / "garden.jsonl.gz"
    async with client(address, "ops") as ops:
        backed_up = await ops.backup(NS, file)
        restored = await ops.restore(file, "garden-copy")
        again = await ops.restore(file, "garden-copy")
        copied = await ops.documents(namespace="garden-copy")
    local = tmp_path / "local.jsonl.gz"
    in_process = await application.backups.backup(NS, local)
    assert backed_up.model_dump(exclude={"file"}) == in_process.model_dump(exclude={"file"})
    assert backed_up.file == str(file)
    assert gzip.decompress(file.read_bytes()).count(b"\n") == in_process.documents + 2
    assert (restored.restored, restored.unchanged, restored.failed) == (len(NOTES), 0, {})
    assert (again.restored, again.unchanged) == (0, len(NOTES))
    original = await application.library.documents(NS)
    assert [d.document_id for d in copied] == [d.document_id for d in original]
    assert list((application.settings.data_dir / "scratch").iterdir()) == []


async def test_a_file_larger_than_one_message_goes_in_parts(
    address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backup_transfer, "PART_BYTES", 256)
    file = tmp_path / "garden.jsonl.gz"
    async with client(address, "ops") as ops:
        report = await ops.backup(NS, file)
        restored = await ops.restore(file, "garden-copy")
    assert file.stat().st_size > 10 * 256
    assert restored.restored == report.documents == len(NOTES)


async def test_both_need_the_admin_scope_on_the_namespace(address: str, tmp_path: Path) -> None:
    file = tmp_path / "garden.jsonl.gz"
    async with client(address, "ops") as ops:
        await ops.backup(NS, file)
    async with client(address, "writer") as writer:
        with pytest.raises(PermissionDeniedError, match="scope 'admin'"):
            await writer.backup(NS, tmp_path / "refused.jsonl.gz")
        with pytest.raises(PermissionDeniedError, match="scope 'admin'"):
            await writer.restore(file, "garden-copy")
    async with client(address, "garden-ops") as garden_ops:
        await garden_ops.restore(file, "garden-copy")
        with pytest.raises(PermissionDeniedError, match="namespace 'orchard'"):
            await garden_ops.restore(file, "orchard")
    assert not (tmp_path / "refused.jsonl.gz").exists()


async def test_a_corrupt_file_is_refused_before_it_is_sent_and_nothing_is_left(
    address: str, tmp_path: Path
) -> None:
    corrupt = tmp_path / "corrupt.jsonl.gz"
    corrupt.write_bytes(b"not a backup")
    async with client(address, "ops") as ops:
        with pytest.raises(BackupFileError):
            await ops.restore(corrupt, "garden-copy")
        with pytest.raises(NotFoundError):
            await ops.backup("empty", tmp_path / "empty.jsonl.gz")
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "corrupt.jsonl.gz",
        "data",
        "tokens.json",
    ]

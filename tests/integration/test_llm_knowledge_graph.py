"""The chat model's knowledge extractor end to end: a write asks the OpenAI-compatible stand-in
once per chunk, the relations it states land in MongoDB's graph, graph search reaches their
targets at hop 2 without asking the model, and a repair reads the extractions from the cache
MongoDB keeps."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from dependency_injector import providers

from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.container import Container
from retrieval.domain.graph import Relation
from retrieval.domain.models import RagDocument, RetrievalQuery
from retrieval.lifecycle import resolve, running
from retrieval.service.caching.cached_knowledge import CachedKnowledgeExtractor
from retrieval.service.retrieval.pipeline import PipelineState, SearchPlan
from retrieval.service.retrieval.pipeline.graph_search import HOP, GraphSearch
from retrieval.service.retrieval.pipeline.near_names import NearNames
from retrieval.settings import Settings
from retrieval_testkit import ChatRequest, HashEmbedder, OpenAiStandIn
from retrieval_testkit.multi_hop_corpus import CORPUS, NS

PORTRAYED = Relation(
    source="corliss archer",
    target="shirley temple",
    type="PORTRAYED_BY",
    description="Shirley Temple stars as Corliss Archer.",
)


def knowledge(request: ChatRequest) -> str:
    """Kiss and Tell's paragraph states who portrayed Corliss Archer; the others, nothing."""
    if "starring Shirley Temple as Corliss Archer" not in request.messages[-1].content:
        return '{"entities": [], "relations": []}'
    stated = {
        "entities": [{"name": n} for n in ("Kiss and Tell", "Shirley Temple", "Corliss Archer")],
        "relations": [
            {
                "source": "Corliss Archer",
                "target": "Shirley Temple",
                "type": "PORTRAYED_BY",
                "description": PORTRAYED.description,
            }
        ],
    }
    return f"```json\n{json.dumps(stated)}\n```"


@pytest.fixture
def standin() -> Iterator[OpenAiStandIn]:
    with OpenAiStandIn(reply=knowledge) as running_standin:
        yield running_standin


def settings(tmp_path: Path, mongo_uri: str, standin: OpenAiStandIn) -> Settings:
    return Settings(
        _env_file=None,
        data_dir=tmp_path,
        mongodb_uri=mongo_uri,
        mongodb_database=f"t{uuid.uuid4().hex[:12]}",
        graph_extractor="llm",
        llm_base_url=standin.base_url,
        llm_model=standin.model,
    )


def documents() -> list[RagDocument]:
    return [
        RagDocument(document_id=c.document_id, title=c.title, domain=c.domain, content=c.content)
        for c in CORPUS
    ]


async def test_relations_reach_the_graph_and_lead_graph_search(
    tmp_path: Path, mongo_uri: str, standin: OpenAiStandIn
) -> None:
    configured = settings(tmp_path, mongo_uri, standin)
    container = Container(settings=configured)
    container.override_providers(model_embedder=providers.Object(HashEmbedder()))
    async with running(configured, container) as app:
        graph = await resolve(container.chunk_graph)
        assert isinstance(graph.knowledge, CachedKnowledgeExtractor)
        assert isinstance(graph.entities, RuleBasedEntityExtractor)
        assert graph.knowledge.version == f"llm:{standin.model}:v1"

        await app.ingestion.ingest(documents(), NS)
        assert len(standin.requests) == len(CORPUS)
        [kiss] = await graph.store.about(["kiss and tell"], namespace=NS)
        assert kiss.relations == (PORTRAYED,)

        plan = SearchPlan(graph=True, graph_hops=2)
        asked = PipelineState.start(RetrievalQuery(query="Who portrayed Corliss Archer?"), NS, plan)
        near = NearNames(
            await resolve(container.keyword_index), await resolve(container.chunk_repository)
        )
        ranked = dict(await GraphSearch(graph.store, graph.entities, near).ranked(asked, 10))
        [temple] = await graph.store.about(["shirley temple"], namespace=NS)
        assert ranked[temple.id] == pytest.approx(HOP * ranked[kiss.id])
        assert len(standin.requests) == len(CORPUS)

        await graph.store.delete(namespace=NS, ids=[kiss.id])
        assert (await app.repair.reconcile(NS)).repaired_documents == 1
        assert await graph.store.about(["kiss and tell"], namespace=NS) == [kiss]
        assert len(standin.requests) == len(CORPUS)

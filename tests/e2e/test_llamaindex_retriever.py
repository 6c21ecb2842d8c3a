"""``retrieval.integrations.llamaindex`` on the real model and stores: nodes with the chunk's
provenance and their document as source, inside LlamaIndex's ``RetrieverQueryEngine``."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import MetadataMode, NodeRelationship

from retrieval.api import KnowledgeBase
from retrieval.grpc import RetrievalClient
from retrieval.integrations.llamaindex import KnowledgeBaseRetriever


@pytest.fixture
def retriever(
    loop_knowledge_base: KnowledgeBase,
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus_namespace: str,
) -> KnowledgeBaseRetriever:
    return KnowledgeBaseRetriever(
        loop_knowledge_base, loop=knowledge_loop, namespace=corpus_namespace, top_k=8
    )


def test_each_node_is_a_chunk_whose_source_is_its_document(
    retriever: KnowledgeBaseRetriever,
) -> None:
    found = retriever.retrieve("thatch young bushes on frosty nights")

    assert [n.score for n in found] == sorted((n.score for n in found), reverse=True)
    frost = next(n for n in found if n.node.metadata["document_id"] == "frost")
    assert frost.node.node_id == frost.node.metadata["chunk_id"]
    assert frost.node.source_node is not None
    assert frost.node.source_node.node_id == "frost"
    assert frost.node.relationships.keys() == {NodeRelationship.SOURCE}
    assert frost.score == frost.node.metadata["score"]
    metadata = frost.node.metadata
    assert (metadata["title"], metadata["domain"]) == ("Frost protection", "tea_cultivation")
    assert metadata["source"].endswith("handbook/frost.pdf")
    assert metadata["pages"] == [1, 2]
    shown = frost.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "title: Frost protection" in shown
    assert "Thatch young tea bushes" in shown
    assert "chunk_id" not in shown


async def test_a_query_engine_answers_from_the_retrieved_chunks(
    retriever: KnowledgeBaseRetriever,
) -> None:
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())

    response = await engine.aquery("Which sprays control red rust?")

    rust = next(n for n in response.source_nodes if n.node.metadata["document_id"] == "red-rust")
    assert rust.node.metadata["section"] == "Red rust > Control"
    assert "Copper sprays" in str(response)
    assert "title: Red rust | Tea notes" in str(response)


def test_a_query_engine_over_a_served_knowledge_base_answers_synchronously(
    loop_client: RetrievalClient,
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus_namespace: str,
) -> None:
    retriever = KnowledgeBaseRetriever(
        loop_client,
        loop=knowledge_loop,
        namespace=corpus_namespace,
        domains=["plant_diseases"],
        search_options={"mode": "keyword"},
    )
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())

    response = engine.query("grey lesions on mature leaves")

    assert [n.node.source_node.node_id for n in response.source_nodes] == ["grey-blight"]
    assert response.source_nodes[0].node.metadata["scores"].keys() == {"keyword"}
    assert "Pestalotiopsis causes grey lesions" in str(response)

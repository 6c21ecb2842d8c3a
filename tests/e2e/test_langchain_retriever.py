"""``retrieval.integrations.langchain`` on the real model and stores: LangChain's standard
retriever suite over the in-process knowledge base and over a gRPC client, and the retriever
inside a RAG pipeline as LangChain composes one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_classic.output_parsers.boolean import BooleanOutputParser
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_classic.retrievers.document_compressors import LLMChainFilter
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnableParallel, RunnablePassthrough
from langchain_tests.integration_tests import RetrieversIntegrationTests

from retrieval.api import KnowledgeBase
from retrieval.client_api import KnowledgeBaseApi
from retrieval.grpc import RetrievalClient
from retrieval.integrations.langchain import KnowledgeBaseRetriever

ANSWER = "Copper sprays and better drainage control red rust [1]."
QUESTION = "How do growers control red rust?"


class TestInProcessRetriever(RetrieversIntegrationTests):
    """The standard suite over ``retrieval.connect()``'s knowledge base, called from plain
    synchronous code and from event loops other than the one it runs on."""

    @pytest.fixture
    def source(self, loop_knowledge_base: KnowledgeBase) -> KnowledgeBaseApi:
        return loop_knowledge_base

    @pytest.fixture(autouse=True)
    def opened(
        self,
        source: KnowledgeBaseApi,
        knowledge_loop: asyncio.AbstractEventLoop,
        corpus_namespace: str,
    ) -> None:
        self.parameters = {
            "knowledge": source,
            "loop": knowledge_loop,
            "namespace": corpus_namespace,
        }

    @property
    def retriever_constructor(self) -> type[KnowledgeBaseRetriever]:
        return KnowledgeBaseRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return self.parameters

    @property
    def retriever_query_example(self) -> str:
        return "how to keep tea bushes healthy"

    @property
    def num_results_arg_name(self) -> str:
        return "top_k"


class TestServedRetriever(TestInProcessRetriever):
    """The standard suite over a client of a gRPC server."""

    @pytest.fixture
    def source(self, loop_client: RetrievalClient) -> KnowledgeBaseApi:
        return loop_client


@pytest.fixture
def retriever(
    loop_knowledge_base: KnowledgeBase,
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus_namespace: str,
) -> KnowledgeBaseRetriever:
    return KnowledgeBaseRetriever(
        knowledge=loop_knowledge_base, loop=knowledge_loop, namespace=corpus_namespace
    )


def test_each_document_carries_its_chunk_provenance_and_scores(
    retriever: KnowledgeBaseRetriever,
) -> None:
    documents = retriever.invoke("thatch young bushes on frosty nights", top_k=8)

    frost = next(d for d in documents if d.metadata["document_id"] == "frost")
    assert "Thatch young tea bushes" in frost.page_content
    assert frost.id == frost.metadata["chunk_id"]
    assert frost.metadata["title"] == "Frost protection"
    assert frost.metadata["source"].endswith("handbook/frost.pdf")
    assert frost.metadata["domain"] == "tea_cultivation"
    assert frost.metadata["pages"] == [1, 2]
    assert frost.metadata["score"] > 0
    assert set(frost.metadata["scores"]) >= {"dense", "keyword"}
    blight = next(d for d in documents if d.metadata["document_id"] == "grey-blight")
    assert blight.metadata["domain"] == "plant_diseases"
    assert blight.metadata["document_metadata"] == {"region": "assam"}
    scores = [d.metadata["score"] for d in documents]
    assert scores == sorted(scores, reverse=True)


def test_scope_and_search_options_pass_through_from_the_retriever_and_each_call(
    loop_knowledge_base: KnowledgeBase,
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus_namespace: str,
) -> None:
    keyword = KnowledgeBaseRetriever(
        knowledge=loop_knowledge_base,
        loop=knowledge_loop,
        namespace=corpus_namespace,
        domains=["tea_cultivation"],
        search_options={"mode": "keyword"},
    )

    documents = keyword.invoke("sharp knives")
    assert documents[0].metadata["section"] == "Tools"
    assert {d.metadata["domain"] for d in documents} == {"tea_cultivation"}
    assert all(set(d.metadata["scores"]) == {"keyword"} for d in documents)
    assert [d.metadata["section"] for d in keyword.invoke("tea", section="Timing")] == ["Timing"]
    dense = keyword.invoke("sharp knives", mode="dense", top_k=1)
    assert [set(d.metadata["scores"]) for d in dense] == [{"dense"}]


@pytest.mark.parametrize("source", ["loop_knowledge_base", "loop_client"])
def test_the_threshold_and_search_options_reach_the_service_in_process_and_served(
    source: str,
    request: pytest.FixtureRequest,
    knowledge_loop: asyncio.AbstractEventLoop,
    corpus_namespace: str,
) -> None:
    retriever = KnowledgeBaseRetriever(
        knowledge=request.getfixturevalue(source),
        loop=knowledge_loop,
        namespace=corpus_namespace,
        search_options={"mode": "dense"},
    )

    found = retriever.invoke("sharp knives for pruning")
    assert found
    assert all(set(d.metadata["scores"]) == {"dense"} for d in found)
    assert retriever.invoke("sharp knives for pruning", threshold=0.99) == []
    keyword = retriever.invoke("sharp knives", mode="keyword", top_k=1)
    assert [set(d.metadata["scores"]) for d in keyword] == [{"keyword"}]


def test_an_unknown_search_option_is_refused_when_the_retriever_is_made(
    loop_knowledge_base: KnowledgeBase, knowledge_loop: asyncio.AbstractEventLoop
) -> None:
    with pytest.raises(ValueError, match="modes: Extra inputs are not permitted"):
        KnowledgeBaseRetriever(
            knowledge=loop_knowledge_base, loop=knowledge_loop, search_options={"modes": "x"}
        )


class PromptsSeen(BaseCallbackHandler):
    """The messages each chat model of a run was sent."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.prompts.extend(messages)


def numbered(documents: list[Document]) -> str:
    return "\n".join(
        f"[{n}] {d.metadata['title']}: {d.page_content}" for n, d in enumerate(documents, 1)
    )


def rag_chain(retriever: Any) -> Any:
    """LangChain's RAG with sources: the documents retrieved, and the model's answer from
    them."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from these sources, citing them:\n{context}"), ("human", "{question}")]
    )
    answer = (
        RunnablePassthrough.assign(context=lambda given: numbered(given["context"]))
        | prompt
        | FakeListChatModel(responses=[ANSWER])
        | StrOutputParser()
    )
    return RunnableParallel(context=retriever, question=RunnablePassthrough()).assign(answer=answer)


def passages_about(word: str) -> LLMChainFilter:
    """LangChain's filter of passages by a model's YES or NO, the model standing in a judge
    that says YES to the passages that mention ``word``."""
    judge = RunnableLambda(lambda given: "YES" if word in given["context"] else "NO")
    return LLMChainFilter(llm_chain=judge | BooleanOutputParser())


def test_the_retriever_composes_into_a_compressed_rag_chain_called_synchronously(
    retriever: KnowledgeBaseRetriever,
) -> None:
    compressed = ContextualCompressionRetriever(
        base_compressor=passages_about("drainage"), base_retriever=retriever
    )
    seen = PromptsSeen()

    out = rag_chain(compressed).invoke(QUESTION, config={"callbacks": [seen]})

    assert out["answer"] == ANSWER
    assert [d.metadata["document_id"] for d in out["context"]] == ["red-rust"]
    assert "[1] Red rust" in seen.prompts[0][0].content
    assert "Better drainage" in seen.prompts[0][0].content


async def test_a_chain_over_a_served_knowledge_base_runs_on_the_callers_loop(
    served_client: RetrievalClient, corpus_namespace: str
) -> None:
    retriever = KnowledgeBaseRetriever(knowledge=served_client, namespace=corpus_namespace)
    compressed = ContextualCompressionRetriever(
        base_compressor=passages_about("drainage"), base_retriever=retriever
    )

    out = await rag_chain(compressed).ainvoke(QUESTION)

    assert out["answer"] == ANSWER
    assert [d.metadata["document_id"] for d in out["context"]] == ["red-rust"]
    rust = out["context"][0].metadata
    assert (rust["title"], rust["section"]) == ("Red rust | Tea notes", "Red rust > Control")
    assert rust["source"].endswith("handbook/red-rust.html")
    with pytest.raises(RuntimeError, match="await the async method"):
        retriever.invoke(QUESTION)

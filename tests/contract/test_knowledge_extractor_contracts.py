"""Every KnowledgeExtractor honours one contract: names only from the rule-based extractor,
the chat model's (scripted, and over HTTP against the loopback stand-in), and either behind
the extraction cache."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from retrieval.adapters.extraction.entity_names_knowledge import EntityNamesKnowledgeExtractor
from retrieval.adapters.extraction.llm_knowledge import LlmKnowledgeExtractor
from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval.adapters.openai.chat_llm import OpenAiChatLlm
from retrieval.service.caching.cached_knowledge import CachedKnowledgeExtractor
from retrieval_testkit import InMemoryExtractionCache, OpenAiStandIn, ScriptedLlm
from retrieval_testkit.contracts.knowledge_extractor import (
    KnowledgeExtractorContract,
    capable_model,
)


class TestEntityNamesKnowledgeExtractor(KnowledgeExtractorContract):
    @pytest.fixture
    def extractor(self) -> EntityNamesKnowledgeExtractor:
        return EntityNamesKnowledgeExtractor(RuleBasedEntityExtractor())


class TestLlmKnowledgeExtractor(KnowledgeExtractorContract):
    @pytest.fixture
    def extractor(self) -> LlmKnowledgeExtractor:
        return LlmKnowledgeExtractor(ScriptedLlm(capable_model))


class TestLlmKnowledgeExtractorOverHttp(KnowledgeExtractorContract):
    @pytest.fixture
    def standin(self) -> Iterator[OpenAiStandIn]:
        with OpenAiStandIn(reply=capable_model) as running:
            yield running

    @pytest.fixture
    async def extractor(self, standin: OpenAiStandIn) -> AsyncIterator[LlmKnowledgeExtractor]:
        llm = OpenAiChatLlm(
            standin.base_url, None, standin.model, request_timeout_s=2.0, call_timeout_s=5.0
        )
        yield LlmKnowledgeExtractor(llm)
        await llm.close()


class TestCachedKnowledgeExtractor(KnowledgeExtractorContract):
    @pytest.fixture
    def extractor(self) -> CachedKnowledgeExtractor:
        inner = LlmKnowledgeExtractor(ScriptedLlm(capable_model))
        return CachedKnowledgeExtractor(inner, InMemoryExtractionCache())

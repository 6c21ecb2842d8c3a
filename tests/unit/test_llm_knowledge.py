"""The chat model's knowledge extractor: what it asks, how it reads replies, its cache."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from retrieval.adapters.extraction.llm_knowledge import MAX_TEXT_CHARS, LlmKnowledgeExtractor
from retrieval.domain.graph import MAX_DESCRIPTION_CHARS, Extraction, Relation
from retrieval.errors import BackendUnavailableError, ConfigurationError, UnreadableReplyError
from retrieval.lifecycle import running
from retrieval.service.caching.cached_knowledge import CachedKnowledgeExtractor
from retrieval.settings import Settings
from retrieval_testkit import InMemoryExtractionCache, ScriptedLlm
from retrieval_testkit.container import in_memory_container

TEXT = "Kiss and Tell is a 1945 comedy starring Shirley Temple as Corliss Archer."
KNOWLEDGE = {
    "entities": [
        {"name": "Shirley Temple", "type": "person", "description": "An actress."},
        {"name": "Corliss Archer", "type": "character"},
    ],
    "relations": [
        {
            "source": "Corliss Archer",
            "target": "Shirley Temple",
            "type": "portrayed by",
            "description": "Shirley Temple plays Corliss Archer.",
        }
    ],
}
PORTRAYED = Relation(
    source="corliss archer",
    target="shirley temple",
    type="PORTRAYED_BY",
    description="Shirley Temple plays Corliss Archer.",
)


def replying(text: str) -> ScriptedLlm:
    return ScriptedLlm(lambda request: text)


async def extracted(reply: str) -> Extraction:
    return await LlmKnowledgeExtractor(replying(reply)).extract(TEXT)


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(KNOWLEDGE),
        f"```json\n{json.dumps(KNOWLEDGE, indent=2)}\n```",
        f"Here is what the passage states: {json.dumps(KNOWLEDGE)} (two entities, {{ok}}).",
    ],
    ids=["bare", "fenced", "prose-around"],
)
async def test_the_json_object_is_read_wherever_it_stands(reply: str) -> None:
    assert await extracted(reply) == Extraction(
        names=("Shirley Temple", "Corliss Archer"), relations=(PORTRAYED,)
    )


@pytest.mark.parametrize(
    "reply",
    [
        "Shirley Temple, Corliss Archer",
        '{"entities": [{"name": "Shirley Temple"}], "relations": [',
        '{"entities": "Shirley Temple", "relations": []}',
        '{"entities": [{"name": 7}], "relations": []}',
        '{"people": ["Shirley Temple"]}',
        "[]",
    ],
    ids=["prose", "cut-short", "not-a-list", "not-a-name", "other-keys", "array"],
)
async def test_a_reply_without_an_extraction_is_a_typed_error(reply: str) -> None:
    with pytest.raises(UnreadableReplyError, match="no knowledge extraction"):
        await extracted(reply)


async def test_names_are_normalised_once_and_relations_keep_to_them() -> None:
    reply = {
        "entities": [
            {"name": "  Shirley   Temple's "},
            {"name": "shirley temple"},
            {"name": "Corliss Archer"},
            {"name": "..."},
        ],
        "relations": [
            {"source": "Corliss Archer", "target": "Shirley Temple", "type": "PORTRAYED_BY"},
            {"source": "Corliss Archer", "target": "Ghana", "type": "VISITED"},
            {"source": "Corliss Archer", "target": "Corliss Archer", "type": "IS"},
            {"source": "Shirley Temple", "target": "Corliss Archer", "type": None},
        ],
    }
    found = await extracted(json.dumps(reply))
    assert found.names == ("Shirley Temple", "Corliss Archer")
    assert [(r.source, r.type, r.target) for r in found.relations] == [
        ("corliss archer", "PORTRAYED_BY", "shirley temple"),
        ("shirley temple", "RELATED_TO", "corliss archer"),
    ]


async def test_an_overlong_description_is_cut() -> None:
    reply = {
        "entities": [{"name": "Shirley Temple"}, {"name": "Ghana"}],
        "relations": [
            {
                "source": "Shirley Temple",
                "target": "Ghana",
                "type": "AMBASSADOR_TO",
                "description": "She was ambassador. " * 40,
            }
        ],
    }
    [relation] = (await extracted(json.dumps(reply))).relations
    assert len(relation.description) <= MAX_DESCRIPTION_CHARS
    assert relation.description.startswith("She was ambassador. She was")


async def test_one_bounded_call_at_temperature_zero() -> None:
    llm = replying(json.dumps(KNOWLEDGE))
    extractor = LlmKnowledgeExtractor(llm)
    await extractor.extract("word " * MAX_TEXT_CHARS)
    [call] = llm.calls
    assert (call.temperature, call.max_tokens is not None) == (0.0, True)
    assert [m.role for m in call.messages] == ["system", "user"]
    assert len(call.messages[-1].content) == MAX_TEXT_CHARS
    assert extractor.version == "llm:scripted-model:v1"


async def test_a_blank_text_asks_nothing() -> None:
    llm = replying("never read")
    assert await LlmKnowledgeExtractor(llm).extract(" \n") == Extraction()
    assert llm.calls == []


class CacheDown(InMemoryExtractionCache):
    async def get_many(self, keys: Sequence[str]) -> dict[str, Extraction]:
        raise BackendUnavailableError("MongoDB unreachable during find")

    async def put_many(self, entries: Mapping[str, Extraction]) -> None:
        raise BackendUnavailableError("MongoDB unreachable during upsert")


def counted(model: str = "scripted-model") -> ScriptedLlm:
    return ScriptedLlm(lambda request: json.dumps(KNOWLEDGE), model=model)


async def test_a_cached_text_is_not_read_again() -> None:
    llm, cache = counted(), InMemoryExtractionCache()
    extractor = CachedKnowledgeExtractor(LlmKnowledgeExtractor(llm), cache)
    first = await extractor.extract(TEXT)
    again = await CachedKnowledgeExtractor(LlmKnowledgeExtractor(llm), cache).extract(TEXT)
    assert again == first
    assert first.relations == (PORTRAYED,)
    assert len(llm.calls) == 1
    await extractor.extract(TEXT + " Again.")
    assert len(llm.calls) == 2


async def test_another_version_misses_the_cache() -> None:
    cache = InMemoryExtractionCache()
    await CachedKnowledgeExtractor(LlmKnowledgeExtractor(counted()), cache).extract(TEXT)
    other = counted("another-model")
    extractor = CachedKnowledgeExtractor(LlmKnowledgeExtractor(other), cache)
    assert extractor.version == "llm:another-model:v1"
    await extractor.extract(TEXT)
    assert len(other.calls) == 1


async def test_a_failing_cache_costs_calls_not_extractions() -> None:
    llm = counted()
    extractor = CachedKnowledgeExtractor(LlmKnowledgeExtractor(llm), CacheDown())
    assert (await extractor.extract(TEXT)).relations == (PORTRAYED,)
    assert len(llm.calls) == 1


async def test_the_llm_extractor_without_a_model_stops_the_start(tmp_path: Path) -> None:
    settings = Settings(_env_file=None, data_dir=tmp_path, graph_extractor="llm")
    with pytest.raises(ConfigurationError, match="RETRIEVAL_LLM_MODEL"):
        async with running(settings, in_memory_container(settings)):
            pass

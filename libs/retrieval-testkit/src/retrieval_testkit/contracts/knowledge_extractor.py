"""What every KnowledgeExtractor must do. Subclass and provide an ``extractor`` fixture; one
that asks a chat model gets its replies from ``capable_model``, which answers the suite's
texts as a capable model would (in a code fence, names as written in the text).

Only what every extractor finds is asserted (people and places a rule and a model both
find); relations are asserted of their shape, since rules state none.
"""

from __future__ import annotations

import json

import pytest

from retrieval.domain.names import name_key
from retrieval.ports.knowledge_extractor import KnowledgeExtractor
from retrieval_testkit.contracts.entity_extractor import BIOGRAPHY, PLAIN, folded
from retrieval_testkit.scripted_llm import ChatRequest

BIOGRAPHY_KNOWLEDGE = {
    "entities": [
        {"name": "Kiss and Tell", "type": "work"},
        {"name": "Shirley Temple", "type": "person"},
        {"name": "Corliss  Archer", "type": "character"},
        {"name": "Corliss Archer", "type": "character"},
        {"name": "United States", "type": "place"},
        {"name": "Ghana", "type": "place"},
    ],
    "relations": [
        {
            "source": "Corliss Archer",
            "target": "Shirley Temple",
            "type": "portrayed by",
            "description": "Shirley Temple stars as Corliss Archer in Kiss and Tell.",
        },
        {
            "source": "Shirley Temple",
            "target": "Ghana",
            "type": "AMBASSADOR_TO",
            "description": "She served as United States Ambassador to Ghana.",
        },
    ],
}


def capable_model(request: ChatRequest) -> str:
    """The reply of a model that reads the suite's texts well."""
    text = request.messages[-1].content
    known = BIOGRAPHY_KNOWLEDGE if text == BIOGRAPHY else {"entities": [], "relations": []}
    return f"```json\n{json.dumps(known, indent=1)}\n```"


class KnowledgeExtractorContract:
    async def test_the_names_a_text_states_are_found(self, extractor: KnowledgeExtractor) -> None:
        names = folded(list((await extractor.extract(BIOGRAPHY)).names))
        assert {"shirley temple", "corliss archer", "ghana"} <= set(names)

    async def test_each_name_comes_once_normalised(self, extractor: KnowledgeExtractor) -> None:
        names = (await extractor.extract(BIOGRAPHY)).names
        assert len(folded(list(names))) == len(set(folded(list(names))))
        assert all(name == " ".join(name.split()) for name in names)

    async def test_relations_join_names_of_the_extraction(
        self, extractor: KnowledgeExtractor
    ) -> None:
        found = await extractor.extract(BIOGRAPHY)
        keys = {name_key(name) for name in found.names}
        for relation in found.relations:
            assert {relation.source, relation.target} <= keys
            assert relation.source != relation.target

    async def test_a_text_without_names_states_nothing(self, extractor: KnowledgeExtractor) -> None:
        found = await extractor.extract(PLAIN)
        assert (found.names, found.relations) == ((), ())

    @pytest.mark.parametrize("blank", ["", "   ", "\n\t"])
    async def test_a_blank_text_states_nothing(
        self, extractor: KnowledgeExtractor, blank: str
    ) -> None:
        found = await extractor.extract(blank)
        assert (found.names, found.relations) == ((), ())

    async def test_the_version_names_the_extractor(self, extractor: KnowledgeExtractor) -> None:
        assert extractor.version
        assert extractor.version == extractor.version

"""The rule-based extractor honours the EntityExtractor contract."""

import pytest

from retrieval.adapters.extraction.rule_based_entities import RuleBasedEntityExtractor
from retrieval_testkit.contracts import EntityExtractorContract


class TestRuleBasedEntityExtractor(EntityExtractorContract):
    @pytest.fixture
    def extractor(self) -> RuleBasedEntityExtractor:
        return RuleBasedEntityExtractor()

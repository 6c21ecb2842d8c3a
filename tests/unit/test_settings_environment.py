"""Settings read from the environment refuse a bad value with ``ValidationError``."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from retrieval.settings import Settings


@pytest.mark.parametrize("value", ["", "plant_diseases", "[plant_diseases", '{"a": 1}', '"tea"'])
def test_allowed_domains_that_are_no_json_list_are_a_validation_error(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", value)
    with pytest.raises(ValidationError, match="allowed_domains"):
        Settings(_env_file=None)


def test_allowed_domains_are_read_as_a_json_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", '["plant_diseases", "frost"]')
    assert Settings(_env_file=None).allowed_domains == ("plant_diseases", "frost")
    assert Settings(_env_file=None, allowed_domains=("tea",)).allowed_domains == ("tea",)

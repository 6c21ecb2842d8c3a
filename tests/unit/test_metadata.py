"""What metadata a document may carry: what every store it reaches can hold."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from retrieval.domain.metadata import check_metadata
from retrieval.domain.models import RagDocument


def document(metadata: dict) -> RagDocument:
    return RagDocument(
        document_id="frost",
        title="Frost",
        domain="weather_patterns",
        content="Frost.",
        metadata=metadata,
    )


@pytest.mark.parametrize("key", ["a\x00b", "\x00", "$region", ""])
def test_a_key_no_store_can_hold_is_refused_by_name(key: str) -> None:
    with pytest.raises(ValidationError) as refused:
        document({key: 1})
    problem = refused.value.errors()[0]
    assert problem["loc"] == ("metadata",)
    assert repr(key) in problem["msg"]


@given(st.text(min_size=1).filter(lambda key: not key.startswith("$")))
def test_a_key_is_accepted_exactly_when_it_has_no_nul(key: str) -> None:
    if "\x00" in key:
        with pytest.raises(ValueError, match="NUL"):
            check_metadata({key: "x"})
    else:
        assert check_metadata({key: "x"}) == {key: "x"}


def test_dotted_keys_are_kept() -> None:
    assert document({"soil.ph": 5.5}).metadata == {"soil.ph": 5.5}

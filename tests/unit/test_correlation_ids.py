"""Correlation ids: one per call, bound to every log line inside its scope."""

from __future__ import annotations

import re

import structlog

from retrieval.logging import correlation_scope, current_correlation_id, new_correlation_id


def test_new_ids_are_32_hexadecimal_digits_and_distinct() -> None:
    ids = [new_correlation_id() for _ in range(10_000)]
    assert all(re.fullmatch(r"[0-9a-f]{32}", cid) for cid in ids)
    assert len(set(ids)) == len(ids)


def test_a_scope_binds_a_new_id_and_an_inner_scope_keeps_it() -> None:
    structlog.contextvars.clear_contextvars()
    with correlation_scope() as outer:
        assert current_correlation_id() == outer
        with correlation_scope() as inner:
            assert inner == outer
    assert current_correlation_id() is None
    with correlation_scope("from-caller") as given:
        assert given == "from-caller" == current_correlation_id()

"""Grants of bearer tokens: scopes, namespace patterns, token look-up and the tokens file."""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retrieval.domain.tenants import (
    EVERY_NAMESPACE,
    Grant,
    Scope,
    Tenants,
    admin_grant,
    authorise,
    grants_from_json,
    token_digest,
)
from retrieval.errors import PermissionDeniedError, TokensFileError

names = st.from_regex(r"[a-z][a-z0-9\-]{0,11}", fullmatch=True)
namespaces = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
patterns = st.from_regex(r"[a-c0-9\-*?]{1,8}", fullmatch=True)
tokens = st.text(min_size=1, max_size=40)


def grants_of(scopes: list[Scope]) -> st.SearchStrategy[Grant]:
    """Grants holding one or more of ``scopes``."""
    return st.builds(
        Grant,
        name=names,
        sha256=tokens.map(token_digest),
        namespaces=st.lists(patterns, min_size=1, max_size=3).map(tuple),
        scopes=st.frozensets(st.sampled_from(scopes), min_size=1),
    )


grants = grants_of(list(Scope))


def grant(scopes: set[Scope], *patterns: str, name: str = "team-a") -> Grant:
    return Grant(
        name=name, sha256=token_digest(name), namespaces=patterns, scopes=frozenset(scopes)
    )


@given(grants, namespaces, st.sampled_from(Scope))
def test_a_grant_never_allows_a_namespace_its_patterns_do_not_match(
    held: Grant, namespace: str, scope: Scope
) -> None:
    matched = any(fnmatchcase(namespace, pattern) for pattern in held.namespaces)
    if matched and held.holds(scope):
        authorise(held, scope, namespace)
    else:
        with pytest.raises(PermissionDeniedError):
            authorise(held, scope, namespace)


@given(grants_of([Scope.ADMIN]))
def test_admin_holds_every_scope(held: Grant) -> None:
    assert all(held.holds(scope) for scope in Scope)


@given(grants_of([scope for scope in Scope if scope is not Scope.ADMIN]), st.sampled_from(Scope))
def test_without_admin_a_grant_holds_exactly_its_scopes(held: Grant, scope: Scope) -> None:
    assert held.holds(scope) is (scope in held.scopes)


@given(names, namespaces)
def test_every_namespace_is_covered_by_the_star(name: str, namespace: str) -> None:
    held = grant({Scope.READ}, EVERY_NAMESPACE, name=name)
    assert held.every_namespace
    assert held.covers(namespace)


def test_a_glob_covers_its_prefix_and_nothing_else() -> None:
    held = grant({Scope.READ, Scope.WRITE}, "team-a-*")
    assert held.covers("team-a-docs")
    assert not held.covers("team-b-docs")
    assert not held.covers("Team-a-docs")
    assert not held.every_namespace


def test_a_refusal_names_the_scope_or_the_namespace() -> None:
    reader = grant({Scope.READ}, "team-a-*")
    with pytest.raises(PermissionDeniedError, match="scope 'write'"):
        authorise(reader, Scope.WRITE, "team-a-docs")
    with pytest.raises(PermissionDeniedError, match="namespace 'team-b-docs'"):
        authorise(reader, Scope.READ, "team-b-docs")
    authorise(reader, Scope.READ, None)


@given(st.lists(tokens, min_size=1, max_size=5, unique=True), tokens)
def test_a_token_finds_its_own_grant_and_no_other(known: list[str], presented: str) -> None:
    held = [admin_grant(f"t{position}", token) for position, token in enumerate(known)]
    tenants = Tenants(held, "test")
    for token, expected in zip(known, held, strict=True):
        assert tenants.grant_for(token) == expected
    found = tenants.grant_for(presented)
    assert (found is None) is (presented not in known)


def entry(**changes: Any) -> dict[str, Any]:
    fields = {
        "name": "team-a",
        "sha256": token_digest("team-a-token"),
        "namespaces": ["team-a-*"],
        "scopes": ["read", "write"],
    }
    return {**fields, **changes}


def test_a_tokens_file_is_read_into_grants() -> None:
    text = json.dumps([entry(), entry(name="ops", sha256="AB" * 32, scopes=["admin"])])
    team, ops = grants_from_json(text, "tokens.json")
    assert team.scopes == {Scope.READ, Scope.WRITE}
    assert team.namespaces == ("team-a-*",)
    assert ops.sha256 == "ab" * 32


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[{", "not valid JSON"),
        (json.dumps({"tokens": []}), "must be a JSON list"),
        (json.dumps(["team-a"]), "entry 0: Input should be a valid dictionary"),
        (json.dumps([entry(), {"name": "b"}]),
         "entry 1 ('b'): sha256: Field required; namespaces: Field required"),
        (json.dumps([entry(scopes=["read", "delete"])]), "scopes.1: Input should be 'read'"),
        (json.dumps([entry(sha256="abc123")]), "sha256: must be the 64 hex digits"),
        (json.dumps([entry(sha256="g" * 64)]), "sha256: must be the 64 hex digits"),
        (json.dumps([entry(namespaces=[])]), "namespaces: Tuple should have at least 1 item"),
        (json.dumps([entry(scopes=[])]), "scopes: Frozenset should have at least 1 item"),
        (json.dumps([entry(namespace=["x"])]), "namespace: Extra inputs are not permitted"),
        (json.dumps([entry(namespaces=["team a"])]), "namespaces.0: String should match"),
    ],
    ids=[
        "bad-json", "not-a-list", "not-an-object", "missing-fields", "unknown-scope",
        "short-sha256", "non-hex-sha256", "no-namespaces", "no-scopes", "unknown-field",
        "bad-pattern",
    ],
)  # fmt: skip
def test_an_invalid_tokens_file_names_the_file_the_entry_and_the_problem(
    text: str, problem: str
) -> None:
    with pytest.raises(TokensFileError, match=rf"^tokens\.json: .*{re.escape(problem)}"):
        grants_from_json(text, "tokens.json")


def test_a_token_written_where_its_digest_belongs_is_not_repeated() -> None:
    with pytest.raises(TokensFileError) as raised:
        grants_from_json(json.dumps([entry(sha256="plain-secret-token")]), "tokens.json")
    assert "plain-secret-token" not in str(raised.value)


def test_names_and_digests_are_unique() -> None:
    team = grant({Scope.READ}, "a", name="team-a")
    with pytest.raises(TokensFileError, match="the name 'team-a' is used 2 times"):
        Tenants([team, team.model_copy(update={"sha256": token_digest("other")})], "f.json")
    twin = team.model_copy(update={"name": "team-b"})
    with pytest.raises(TokensFileError, match="'team-a' and 'team-b' have the same sha256"):
        Tenants([team, twin], "f.json")

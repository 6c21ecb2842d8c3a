"""Tenants of the gRPC API: which grant a bearer token carries, and what a grant allows.

A grant is one entry of the tokens file: a ``name`` for logs, the ``sha256`` hex digest of
the token (the file holds no secret), namespace patterns (``fnmatch`` style, case-sensitive:
``*``, ``?``, ``[ab]``, ``[!ab]``) and scopes. A call is allowed when the grant holds the
call's scope and one of its patterns matches the call's namespace; ``admin`` implies
``read`` and ``write``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from fnmatch import fnmatchcase
from typing import Annotated, Any

from pydantic import AfterValidator, Field, StringConstraints, ValidationError

from retrieval.domain.models import Frozen, Slug
from retrieval.errors import PermissionDeniedError, TokensFileError

EVERY_NAMESPACE = "*"
SHOWN_NAMESPACE_CHARS = 128
"""A refused namespace is quoted in the refusal up to this length."""


class Scope(StrEnum):
    READ = "read"
    WRITE = "write"
    ADMIN = "admin"


def hex_digest(value: str) -> str:
    """A SHA-256 hex digest, lower case; ValueError for anything else."""
    if len(value) != 64 or any(char not in "0123456789abcdefABCDEF" for char in value):
        raise ValueError("must be the 64 hex digits of the token's SHA-256")
    return value.lower()


Digest = Annotated[str, AfterValidator(hex_digest)]
NamespacePattern = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.\-*?\[\]!]{1,128}$")]


def token_digest(token: str) -> str:
    """What the tokens file holds for ``token``: the hex SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(token.encode()).hexdigest()


class Grant(Frozen):
    """What the holder of one bearer token may do, and where."""

    name: Slug = Field(description="Names the token in logs; never the token itself.")
    sha256: Digest = Field(description="Hex SHA-256 of the token.")
    namespaces: tuple[NamespacePattern, ...] = Field(
        min_length=1, description="Namespace patterns (fnmatch style) the token may use."
    )
    scopes: frozenset[Scope] = Field(
        min_length=1, description="read, write and admin (admin implies read and write)."
    )

    def holds(self, scope: Scope) -> bool:
        return scope in self.scopes or Scope.ADMIN in self.scopes

    def covers(self, namespace: str) -> bool:
        return any(fnmatchcase(namespace, pattern) for pattern in self.namespaces)

    @property
    def every_namespace(self) -> bool:
        """Whether the grant covers every namespace there is or will be."""
        return EVERY_NAMESPACE in self.namespaces


def admin_grant(name: str, token: str) -> Grant:
    """Every scope on every namespace, for ``token``."""
    return Grant(
        name=name,
        sha256=token_digest(token),
        namespaces=(EVERY_NAMESPACE,),
        scopes=frozenset({Scope.ADMIN}),
    )


def authorise(grant: Grant, scope: Scope, namespace: str | None) -> None:
    """Raise ``PermissionDeniedError`` unless ``grant`` holds ``scope`` in ``namespace``
    (None: a call about no one namespace, which needs the scope alone)."""
    if not grant.holds(scope):
        raise PermissionDeniedError(f"token {grant.name!r} does not grant scope {scope.value!r}")
    if namespace is not None and not grant.covers(namespace):
        shown = namespace[:SHOWN_NAMESPACE_CHARS]
        raise PermissionDeniedError(
            f"token {grant.name!r} does not grant namespace {shown!r} (scope {scope.value!r})"
        )


class Tenants:
    """The grants of every configured token; a token is looked up in constant time."""

    def __init__(self, grants: Sequence[Grant], source: str) -> None:
        """``source`` names where the grants come from in the errors about them."""
        for name, count in Counter(grant.name for grant in grants).items():
            if count > 1:
                raise TokensFileError(f"{source}: the name {name!r} is used {count} times")
        by_digest: dict[str, str] = {}
        for grant in grants:
            if grant.sha256 in by_digest:
                raise TokensFileError(
                    f"{source}: {by_digest[grant.sha256]!r} and {grant.name!r} have the same "
                    "sha256 (one token, two grants)"
                )
            by_digest[grant.sha256] = grant.name
        self._grants = tuple(grants)

    def grant_for(self, token: str) -> Grant | None:
        """The grant of ``token``, or None; every digest is compared, in constant time."""
        presented = token_digest(token)
        found = None
        for grant in self._grants:
            if hmac.compare_digest(presented, grant.sha256):
                found = grant
        return found


WORD_EXTENDING = re.compile(r"[A-Za-z0-9][*?\[]")
"""A wildcard right after a letter or digit: ``tenant-a*`` reads ``tenant-ab`` too."""


def word_extending_patterns(grants: Sequence[Grant]) -> list[tuple[str, str]]:
    """``(token name, pattern)`` of every namespace pattern whose wildcard can extend a word,
    so that it reaches namespaces of another tenant whose name starts the same way."""
    return [
        (grant.name, pattern)
        for grant in grants
        for pattern in grant.namespaces
        if WORD_EXTENDING.search(pattern)
    ]


def entry_label(position: int, entry: Any) -> str:
    name = entry.get("name") if isinstance(entry, dict) else None
    return f"entry {position} ({name!r})" if isinstance(name, str) else f"entry {position}"


def problem(error: ValidationError) -> str:
    """Every field Pydantic refused, with why; never the refused value (it may be a token)."""
    problems = []
    for detail in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in detail["loc"])
        why = str(detail["ctx"]["error"]) if detail["type"] == "value_error" else detail["msg"]
        problems.append(f"{where}: {why}" if where else why)
    return "; ".join(problems)


def grants_from_json(text: str, source: str) -> tuple[Grant, ...]:
    """The grants of a tokens file: a JSON list of ``{"name", "sha256", "namespaces",
    "scopes"}``; ``TokensFileError`` naming ``source``, the entry and the problem."""
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as error:
        raise TokensFileError(f"{source}: not valid JSON: {error}") from error
    if not isinstance(entries, list):
        raise TokensFileError(f"{source}: must be a JSON list of tokens")
    grants = []
    for position, entry in enumerate(entries):
        try:
            grants.append(Grant.model_validate(entry))
        except ValidationError as error:
            label = entry_label(position, entry)
            raise TokensFileError(f"{source}: {label}: {problem(error)}") from error
    return tuple(grants)

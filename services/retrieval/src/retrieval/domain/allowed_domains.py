"""Which knowledge domains documents and queries may name.

Any well-formed name (``DomainName``) unless the operator sets ``RETRIEVAL_ALLOWED_DOMAINS``:
an empty allow-list is open, a set one refuses every domain it does not list. A query naming
no domain searches every domain of its namespace either way (no domain filter).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from retrieval.errors import InvalidRequestError

ALLOW_LIST_SETTING = "RETRIEVAL_ALLOWED_DOMAINS"
NAMES_SHOWN = 10
"""Most names an error lists: a request naming thousands must not get them all echoed."""


def some_of(names: Collection[str]) -> str:
    """The first ``NAMES_SHOWN`` names in order, and how many more there are."""
    ordered = sorted(names)
    shown = ", ".join(ordered[:NAMES_SHOWN])
    more = len(ordered) - NAMES_SHOWN
    return f"{shown} and {more} more" if more > 0 else shown


def refused_domains(domains: Iterable[str], allowed: Collection[str]) -> set[str]:
    """The ``domains`` the allow-list ``allowed`` does not name; none when it is empty."""
    return set(domains) - set(allowed) if allowed else set()


def refusal(refused: Collection[str], allowed: Collection[str]) -> str:
    """Why ``refused`` domains are refused, naming the setting that lists ``allowed``."""
    names = some_of(refused)
    subject = f"domain {names} is" if len(refused) == 1 else f"domains {names} are"
    return f"{subject} not in {ALLOW_LIST_SETTING} ({some_of(allowed)})"


def check_domains(domains: Iterable[str], allowed: Collection[str]) -> None:
    """Refuse the domains outside the allow-list ``allowed`` (none when it is empty)."""
    refused = refused_domains(domains, allowed)
    if refused:
        raise InvalidRequestError(refusal(refused, allowed), field="domains")

"""Context variables bound for the length of a block, safely on CPython 3.11."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def bound(var: ContextVar[T | None], value: T) -> Iterator[T]:
    """``var`` is ``value`` within the block, and what it was before once the block ends.

    A coroutine abandoned inside the block is closed by the garbage collector, in whatever
    context is running then. There ``var`` is left alone: changing a context variable from a
    collection that interrupted another change corrupts the context on CPython 3.11
    (python/cpython#148891, a crash in ``ContextVar.set``).
    """
    token = var.set(value)
    try:
        yield value
    finally:
        unbind(var, value, token)


def unbind(var: ContextVar[T | None], value: T, token: Token[T | None]) -> None:
    """Undo ``token``'s binding of ``value``, only in the context that holds it."""
    if var.get() is value:
        var.reset(token)

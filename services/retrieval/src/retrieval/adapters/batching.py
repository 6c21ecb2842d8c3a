from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def slices(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """``items`` in consecutive pieces of at most ``size``: one request or bulk write each."""
    return [items[start : start + size] for start in range(0, len(items), size)]

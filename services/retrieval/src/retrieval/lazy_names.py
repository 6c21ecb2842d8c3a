"""A package's names imported from their modules on first use (PEP 562), so that importing
one part of the package does not load the rest."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any


def importer(
    package: str, module_of: Mapping[str, str], namespace: MutableMapping[str, Any]
) -> Callable[[str], Any]:
    """The package's ``__getattr__``: each name of ``module_of`` imported from its module,
    then kept in ``namespace`` (the package's globals) for the next lookup."""

    def attribute(name: str) -> Any:
        if name not in module_of:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(module_of[name]), name)
        namespace[name] = value
        return value

    return attribute


def listing(namespace: Mapping[str, Any]) -> Callable[[], list[str]]:
    """The package's ``__dir__``: its globals and the names of its ``__all__``, imported or
    not."""
    return lambda: sorted([*namespace, *namespace["__all__"]])

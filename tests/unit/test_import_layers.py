"""The product's layers, read from its source with `ast`: a module imports only its own layer
and the layers below it that LAYERS lets it, the product imports neither the test kit nor the
benchmarks, and its top-level packages import each other in no cycle. Each failure lists the
imports at fault as ``file:line -> module``. CONTRIBUTING.md draws the same map."""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PRODUCT = "retrieval"
OUTSIDE_THE_PRODUCT = ("retrieval_testkit", "retrieval_bench")
"""Packages that build on the product, so the product never imports them."""

ROOT = "__init__"
"""The product package itself (its public names) as a top-level package of its own."""


@dataclass(frozen=True)
class Layer:
    name: str
    packages: frozenset[str]
    """The product's top-level packages (and modules) in the layer."""
    may_import: frozenset[str]
    """The names of the other layers its modules may import; a layer may import itself."""


FOUNDATION = Layer(
    "foundation",
    frozenset({"errors", "batching", "retries", "deadlines", "lazy_names", "context_scope"}),
    frozenset(),
)
DOMAIN = Layer("domain", frozenset({"domain"}), frozenset({"foundation"}))
CONFIGURATION = Layer(
    "configuration", frozenset({"settings", "store_settings"}), frozenset({"foundation", "domain"})
)
INSTRUMENTS = Layer(
    "instruments",
    frozenset({"logging", "observability"}),
    frozenset({"foundation", "domain", "configuration"}),
)
PORTS = Layer("ports", frozenset({"ports"}), frozenset({"foundation", "domain"}))
ADAPTERS = Layer(
    "adapters", frozenset({"adapters"}), frozenset({"foundation", "domain", "instruments", "ports"})
)
SERVICES = Layer(
    "services", frozenset({"service"}), frozenset({"foundation", "domain", "instruments", "ports"})
)
CONTAINER = Layer(
    "container",
    frozenset({"container", "factories", "lifecycle"}),
    frozenset(
        {"foundation", "domain", "configuration", "instruments", "ports", "adapters", "services"}
    ),
)
DOORS = Layer(
    "doors",
    frozenset(
        {
            ROOT,
            "api",
            "client_api",
            "sync_facade",
            "grpc",
            "cli",
            "console",
            "demo",
            "evaluation",
            "integrations",
            "mcp",
            "source_display",
        }
    ),
    CONTAINER.may_import | {"container"},
)
LAYERS = (
    FOUNDATION,
    DOMAIN,
    CONFIGURATION,
    INSTRUMENTS,
    PORTS,
    ADAPTERS,
    SERVICES,
    CONTAINER,
    DOORS,
)
"""Lowest first. Adapters and services both stand on the ports and never import each other:
the container joins them. Settings are read where things are wired (the container, the doors);
adapters and services take values. Doors may import each other, in no cycle."""

LAYER_OF = {package: layer for layer in LAYERS for package in layer.packages}


@dataclass(frozen=True)
class Import:
    importer: str
    """The top-level package of the importing module."""
    imported: str
    """The module imported."""
    place: str
    """``file:line``, the file relative to the repository."""

    @property
    def imported_package(self) -> str:
        """The product's top-level package imported, ``ROOT`` for the product package itself."""
        parts = self.imported.split(".")
        return parts[1] if len(parts) > 1 else ROOT

    @property
    def is_of_the_product(self) -> bool:
        return self.imported == PRODUCT or self.imported.startswith(f"{PRODUCT}.")

    def __str__(self) -> str:
        return f"{self.place} -> {self.imported}"


def product_directory() -> Path:
    spec = importlib.util.find_spec(PRODUCT)
    assert spec is not None
    assert spec.submodule_search_locations
    return Path(spec.submodule_search_locations[0])


def imported_names(node: ast.Import | ast.ImportFrom, package: str) -> Iterator[str]:
    """The modules an import statement names: ``a`` for `from a import b`, but ``retrieval.b``
    for `from retrieval import b`, which names one of the product's top-level packages."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    if base == PRODUCT:
        yield from (f"{base}.{alias.name}" for alias in node.names)
    else:
        yield base


def product_modules() -> list[Path]:
    return sorted(product_directory().rglob("*.py"))


def top_level_package(module: Path) -> str:
    return module.relative_to(product_directory()).parts[0].removesuffix(".py")


def product_imports() -> list[Import]:
    """Every import statement of every product module, those inside functions and
    ``TYPE_CHECKING`` blocks included: each is a dependency all the same."""
    repository = product_directory().parents[3]
    imports = []
    for module in product_modules():
        within = module.relative_to(product_directory()).with_suffix("").parts[:-1]
        package = ".".join([PRODUCT, *within])
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"), str(module))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                imports.extend(
                    Import(
                        top_level_package(module),
                        name,
                        f"{module.relative_to(repository)}:{node.lineno}",
                    )
                    for name in imported_names(node, package)
                )
    return imports


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return product_imports()


def listing(faults: list[str]) -> str:
    return "\n" + "\n".join(faults)


def test_every_top_level_package_has_a_layer() -> None:
    unplaced = sorted({top_level_package(module) for module in product_modules()} - LAYER_OF.keys())
    assert not unplaced, f"packages in no layer of LAYERS: {unplaced}"


def test_each_layer_imports_only_itself_and_the_layers_it_may(imports: list[Import]) -> None:
    forbidden = []
    for i in imports:
        importer, imported = LAYER_OF.get(i.importer), LAYER_OF.get(i.imported_package)
        if (
            i.is_of_the_product
            and importer
            and imported
            and imported != importer
            and imported.name not in importer.may_import
        ):
            forbidden.append(f"{i}  ({importer.name} may not import {imported.name})")
    assert not forbidden, listing(forbidden)


def test_the_product_imports_neither_the_test_kit_nor_the_benchmarks(
    imports: list[Import],
) -> None:
    outside = [str(i) for i in imports if i.imported.split(".")[0] in OUTSIDE_THE_PRODUCT]
    assert not outside, listing(outside)


def test_the_top_level_packages_import_each_other_in_no_cycle(imports: list[Import]) -> None:
    edges = [(i.importer, i.imported_package, i) for i in imports if i.is_of_the_product]
    graph: dict[str, set[str]] = {}
    for importer, imported, _ in edges:
        if importer != imported:
            graph.setdefault(importer, set()).add(imported)
    cyclic = [
        f"{i}  ({importer} -> {imported} -> ... -> {importer})"
        for importer, imported, i in edges
        if importer != imported and importer in reachable(graph, imported)
    ]
    assert not cyclic, listing(cyclic)


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen = {start}
    frontier = [start]
    while frontier:
        for following in graph.get(frontier.pop(), ()):
            if following not in seen:
                seen.add(following)
                frontier.append(following)
    return seen

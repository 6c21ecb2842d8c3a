"""Both doors to the knowledge base, ``KnowledgeBase`` in process and ``RetrievalClient`` over
gRPC, are ``KnowledgeBaseApi``: its methods, written once, with only the way a request
reaches the services their own; the blocking facade over either takes the same arguments."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

from retrieval.api import KnowledgeBase
from retrieval.client_api import KnowledgeBaseApi, local_paths, split_sources
from retrieval.domain.models import RagDocument
from retrieval.grpc.client import RetrievalClient
from retrieval.sync_facade import SyncKnowledgeBase

METHODS = ["retrieve", "ingest", "sync", "delete", "documents", "ask", "ask_stream", "stats"]
DOCUMENT = RagDocument(document_id="frost", title="Frost", domain="weather", content="Cold.")


def parameters(method: Callable[..., object], *, leaving: str = "") -> list[tuple[object, ...]]:
    """Name, kind, default and annotation of each parameter but ``self`` and ``leaving``."""
    return [
        (p.name, p.kind, p.default, p.annotation)
        for p in inspect.signature(method).parameters.values()
        if p.name not in {"self", leaving}
    ]


def test_the_api_is_the_methods_a_user_meets() -> None:
    declared = [name for name in vars(KnowledgeBaseApi) if not name.startswith("_")]
    assert declared == METHODS


@pytest.mark.parametrize("door", [KnowledgeBase, RetrievalClient])
def test_each_door_is_the_api_and_writes_none_of_its_methods_again(door: type) -> None:
    assert issubclass(door, KnowledgeBaseApi)
    assert [
        name for name in METHODS if getattr(door, name) is not getattr(KnowledgeBaseApi, name)
    ] == []
    assert not inspect.isabstract(door)


@pytest.mark.parametrize("name", METHODS)
def test_every_method_takes_a_timeout(name: str) -> None:
    timeout = inspect.signature(getattr(KnowledgeBaseApi, name)).parameters["timeout"]
    assert timeout.kind is inspect.Parameter.KEYWORD_ONLY
    assert timeout.default is None


@pytest.mark.parametrize("name", [name for name in METHODS if name != "ask_stream"])
def test_the_blocking_facade_takes_the_api_s_arguments(name: str) -> None:
    blocking = getattr(SyncKnowledgeBase, name)
    assert parameters(blocking) == parameters(getattr(KnowledgeBaseApi, name))
    assert not inspect.iscoroutinefunction(blocking)


def test_sources_split_into_paths_and_documents_in_their_order(tmp_path: Path) -> None:
    assert split_sources(tmp_path) == ([tmp_path], [])
    assert split_sources(DOCUMENT) == ([], [DOCUMENT])
    assert split_sources(["a.md", DOCUMENT, tmp_path]) == ([Path("a.md"), tmp_path], [DOCUMENT])
    assert split_sources(path for path in ["b.md", "a.md"]) == ([Path("b.md"), Path("a.md")], [])


def test_one_path_or_many() -> None:
    assert local_paths("docs") == [Path("docs")]
    assert local_paths(["docs", Path("notes")]) == [Path("docs"), Path("notes")]

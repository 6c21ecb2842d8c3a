"""The gRPC fuzz target builds requests of every method, each field of its wire type."""

from __future__ import annotations

from hypothesis import find

from retrieval_testkit.fuzz.grpc_requests import METHODS, messages


def test_a_restore_request_carries_bytes() -> None:
    restore = next(method.input_type for method in METHODS if method.name == "RestoreNamespace")
    found = find(messages(restore), lambda message: len(message.data) > 0)
    assert isinstance(found.data, bytes)

"""Every gRPC request, sent as bytes to one real server on loopback: messages of each method's
request type with hostile field values, the same messages with their bytes mutated, and
random bytes. Any status is fine but INTERNAL and UNKNOWN, and every failure carries the
``x-correlation-id`` trailer."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from google.protobuf.struct_pb2 import Struct
from hypothesis import strategies as st

from retrieval.domain.models import DEFAULT_DOMAINS, SearchMode
from retrieval.domain.ranking.fusion import FusionMethod
from retrieval.domain.validation import QueryType
from retrieval.grpc.metadata import CORRELATION_ID_KEY
from retrieval.grpc.server import SERVICE_NAME, create_server
from retrieval.grpc.settings import GrpcSettings
from retrieval_proto.retrieval.v1 import retrieval_pb2
from retrieval_testkit.fuzz.apps import NAMESPACES, seeded_application
from retrieval_testkit.fuzz.harness import Check, HangError, RefusedError, Runner, Target
from retrieval_testkit.fuzz.strategies import (
    edits,
    markdown,
    mostly,
    mutate,
    valid_slugs,
    words,
)
from retrieval_testkit.plaintext_loopback import PLAINTEXT_LOOPBACK

METHODS = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].methods
METHOD_NAMED = {method.name: method for method in METHODS}
REFUSED = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)
MAX_DEPTH = 3
INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
}
PRINTABLE = "".join(chr(code) for code in range(0x20, 0x7F))
SOURCES = st.sampled_from([
    "/kb",
    "/kb/docs",
    "/kb/docs/guide.md",
    "/kb/docs-old/guide.md",
    "C:/kb/notes.txt",
    "https://example.com/kb/notes",
])  # fmt: skip
"""Sources, roots and prefixes: paths and URLs, nested, and a sibling sharing characters."""
STRINGS_BY_NAME: dict[str, st.SearchStrategy[str]] = {
    "query": words(),
    "namespace": st.sampled_from(NAMESPACES),
    "document_id": valid_slugs(),
    "id": valid_slugs(),
    "domain": st.sampled_from(DEFAULT_DOMAINS),
    "domains": st.sampled_from(DEFAULT_DOMAINS),
    "title": words(6),
    "content": markdown(300),
    "mode": st.sampled_from([mode.value for mode in SearchMode]),
    "fusion": st.sampled_from([method.value for method in FusionMethod]),
    "query_type": st.sampled_from([kind.value for kind in QueryType]),
    "expected_document_ids": valid_slugs(),
    "expected_keywords": words(2),
    "expected_metadata": st.sampled_from(["region", "source"]),
    "uri": SOURCES,
    "root": SOURCES,
    "roots": SOURCES,
    "unreadable": SOURCES,
    "source_prefix": SOURCES,
    "file_type": st.sampled_from(["markdown", "text", "html", "pdf", "docx", "json"]),
    "section": words(3, min_size=1),
    "document_ids": valid_slugs(),
    "page_token": valid_slugs(),
}
NUMBERS_BY_NAME: dict[str, st.SearchStrategy[int | float]] = {
    "top_k": st.integers(1, 100),
    "fetch_k": st.integers(1, 1000),
    "max_per_document": st.integers(0, 100),
    "neighbours": st.integers(0, 10),
    "confidence_threshold": st.floats(0, 0.3),
    "dense_weight": st.floats(0, 10),
    "keyword_weight": st.floats(0, 10),
    "mmr_lambda": st.floats(0, 1),
    "redundancy_threshold": st.floats(0, 1, exclude_min=True),
    "rewrite_threshold": st.floats(0, 1),
    "min_score": st.floats(-1, 1),
    "success_criterion": st.floats(0, 1),
    "page_size": st.integers(1, 1000),
    "size": st.integers(0, 10**9),
}


def struct_values() -> st.SearchStrategy[Any]:
    """What a ``google.protobuf.Struct`` holds: metadata's kinds and the ones it may not."""
    scalar = st.one_of(
        st.none(),
        st.booleans(),
        st.floats(),
        st.integers(-(2**60), 2**60),
        st.text(max_size=30),
    )
    return st.recursive(
        scalar,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(st.text(max_size=8), children, max_size=3),
        ),
        max_leaves=8,
    )


def as_struct(values: dict[str, Any]) -> Struct:
    struct = Struct()
    struct.update(values)
    return struct


def scalar_values(field: FieldDescriptor) -> st.SearchStrategy[Any]:
    """A value of the field's wire type: one its name suggests mostly, any other now and then."""
    kind = field.type
    if kind == FieldDescriptor.TYPE_STRING:
        return mostly(STRINGS_BY_NAME.get(field.name, st.text(max_size=40)), st.text(max_size=200))
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=256)
    if kind == FieldDescriptor.TYPE_ENUM:
        return st.integers(-5, len(field.enum_type.values) + 2)
    if kind in INT_RANGES:
        low, high = INT_RANGES[kind]
        return mostly(NUMBERS_BY_NAME.get(field.name, st.integers(0, 100)), st.integers(low, high))
    return mostly(NUMBERS_BY_NAME.get(field.name, st.floats(0, 1)), st.floats())


def field_values(field: FieldDescriptor, depth: int) -> st.SearchStrategy[Any]:
    if (
        field.message_type is not None
        and field.message_type.full_name == Struct.DESCRIPTOR.full_name
    ):
        single: st.SearchStrategy[Any] = st.dictionaries(
            st.one_of(st.sampled_from(["region", "year", "tags"]), st.text(max_size=10)),
            struct_values(),
            max_size=4,
        ).map(as_struct)
    elif field.message_type is not None:
        single = messages(field.message_type, depth + 1)
    else:
        single = scalar_values(field)
    if field.is_repeated:
        return st.lists(single, max_size=4)
    return single


def messages(descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
    """Messages of this type, any subset of their fields set (none deeper than ``MAX_DEPTH``)."""
    message_class = GetMessageClass(descriptor)
    if depth >= MAX_DEPTH:
        return st.just(message_class())
    fields = {field.name: field_values(field, depth) for field in descriptor.fields}
    return st.fixed_dictionaries({}, optional=fields).map(lambda values: message_class(**values))


def payloads(descriptor: Descriptor) -> st.SearchStrategy[bytes]:
    """A message's bytes, the same mutated, or random bytes."""
    encoded = messages(descriptor).map(lambda message: message.SerializeToString())
    return st.one_of(
        encoded,
        encoded,
        st.builds(mutate, encoded, edits()),
        st.binary(max_size=256),
    )


def requests() -> st.SearchStrategy[dict[str, Any]]:
    correlation_ids = st.one_of(
        st.none(), st.text(alphabet=PRINTABLE, max_size=200), valid_slugs(128)
    )
    return st.one_of(
        *(
            st.fixed_dictionaries(
                {
                    "method": st.just(method.name),
                    "payload": payloads(method.input_type),
                    "correlation_id": correlation_ids,
                }
            )
            for method in METHODS
        )
    )


async def called(
    channel: grpc.aio.Channel, method: MethodDescriptor, payload: bytes, **options: Any
) -> None:
    """``method`` called as it is declared: a stream of answers read to its end, a stream of
    one request sent."""
    path = f"/{SERVICE_NAME}/{method.name}"
    if method.server_streaming:
        async for _ in channel.unary_stream(path)(payload, **options):
            pass
    elif method.client_streaming:
        await channel.stream_unary(path)(iter([payload]), **options)
    else:
        await channel.unary_unary(path)(payload, **options)


async def send(channel: grpc.aio.Channel, case: dict[str, Any], deadline_s: float) -> None:
    metadata = ((CORRELATION_ID_KEY, case["correlation_id"]),) if case["correlation_id"] else None
    begun = time.monotonic()
    try:
        await called(
            channel, METHOD_NAMED[case["method"]], case["payload"],
            timeout=deadline_s, metadata=metadata,
        )  # fmt: skip
    except grpc.aio.AioRpcError as error:
        code = error.code()
        if code is grpc.StatusCode.DEADLINE_EXCEEDED and time.monotonic() - begun >= deadline_s:
            raise HangError(deadline_s) from error
        if code in REFUSED:
            raise AssertionError(f"{code.name}: {error.details()}") from error
        if CORRELATION_ID_KEY not in dict(error.trailing_metadata() or ()):
            raise AssertionError(f"{code.name} without {CORRELATION_ID_KEY}") from error
        raise RefusedError(f"{code.name}: {error.details()}") from error


@asynccontextmanager
async def served() -> AsyncIterator[grpc.aio.Channel]:
    """A channel to a plaintext loopback server of the seeded application."""
    async with seeded_application() as app:
        settings = GrpcSettings(**PLAINTEXT_LOOPBACK)
        server, port = await create_server(app, "127.0.0.1:0", settings)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                yield channel
        finally:
            await server.stop(None)


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    with runner.entered(served()) as channel:
        yield lambda case: runner.run(send(channel, case, 0.9 * runner.timeout_s))


TARGET = Target(name="grpc", strategy=requests(), allowed=(), session=session)

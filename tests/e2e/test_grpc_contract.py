"""The committed generated code is what the .proto gives, and the contract keeps its shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from google.protobuf.descriptor import FieldDescriptor

from retrieval_proto.retrieval.v1 import retrieval_pb2

PROTO_PACKAGE = Path(__file__).parents[2] / "libs" / "retrieval-proto"
GENERATED = PROTO_PACKAGE / "src" / "retrieval_proto" / "retrieval" / "v1"
GENERATED_FILES = ("retrieval_pb2.py", "retrieval_pb2.pyi", "retrieval_pb2_grpc.py")


def test_committed_code_is_what_the_proto_generates(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(PROTO_PACKAGE / "generate.py"), "--out", str(tmp_path)],
        check=True,
        capture_output=True,
        text=True,
    )
    fresh = tmp_path / "retrieval_proto" / "retrieval" / "v1"
    stale = [
        name
        for name in GENERATED_FILES
        if (fresh / name).read_bytes() != (GENERATED / name).read_bytes()
    ]
    assert not stale, f"{stale} are out of date with retrieval.proto: run `make proto`"


def test_service_is_versioned_with_its_rpcs() -> None:
    service = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"]
    assert service.full_name == "retrieval.v1.RetrievalService"
    assert [method.name for method in service.methods] == [
        "Retrieve",
        "IngestDocuments",
        "DeleteDocument",
        "DeleteNamespace",
        "GetStats",
        "BuildContext",
        "Answer",
        "Validate",
        "SyncDocuments",
        "DeleteDocuments",
        "ListDocuments",
        "AnswerStream",
        "BackupNamespace",
        "RestoreNamespace",
    ]
    for method in service.methods:
        assert method.input_type.name == f"{method.name}Request"
        assert method.output_type.name == f"{method.name}Response"


def test_fields_follow_the_style_guide() -> None:
    for message in retrieval_pb2.DESCRIPTOR.message_types_by_name.values():
        numbers = [field.number for field in message.fields]
        assert numbers == list(range(1, len(numbers) + 1)), message.name
        for field in message.fields:
            assert field.name == field.name.lower(), f"{message.name}.{field.name}"
    metadata = retrieval_pb2.RetrievalMatch.DESCRIPTOR.fields_by_name["metadata"]
    assert metadata.type == FieldDescriptor.TYPE_MESSAGE
    assert metadata.message_type.full_name == "google.protobuf.Struct"
    outcome = retrieval_pb2.DESCRIPTOR.enum_types_by_name["Outcome"]
    assert outcome.values[0].name == "OUTCOME_UNSPECIFIED"
    assert all(value.name.startswith("OUTCOME_") for value in outcome.values)


def test_open_ended_fields_are_maps_added_after_the_old_ones() -> None:
    for message, name, number in (
        (retrieval_pb2.RetrieveResponse, "stage_ms", 6),
        (retrieval_pb2.RetrievalMatch, "scores", 8),
    ):
        field = message.DESCRIPTOR.fields_by_name[name]
        assert field.number == number
        assert field.message_type.GetOptions().map_entry
        key, value = field.message_type.fields
        assert (key.type, value.type) == (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_DOUBLE)
    timings = retrieval_pb2.StageTimings.DESCRIPTOR.fields_by_name
    assert [(name, timings[name].number) for name in timings] == [
        ("embed_ms", 1),
        ("search_ms", 2),
        ("fetch_ms", 3),
        ("total_ms", 4),
        ("round_trips", 5),
    ]

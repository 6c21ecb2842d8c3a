"""Values every ``retrieval.v1`` conversion shares: metadata as ``google.protobuf.Struct``,
timestamps, the optional fields a message carries, and the plain fields a message and its
model share.

A model becomes its message through ``model_dump``: the message takes nested models as
dicts, ``None`` as an absent optional field, dicts as ``Struct``s and datetimes as
``Timestamp``s.

A ``Struct``'s numbers are all doubles: a whole number of at most 2**53 comes back as an
``int``, any other number as a ``float``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.struct_pb2 import Struct, Value
from pydantic import BaseModel

from retrieval.errors import InvalidRequestError

MAX_EXACT_INTEGER = 2**53


def optional_namespace(value: str) -> str | None:
    """The namespace a request names, or None for the service's default."""
    return value or None


def python_value(value: Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() and abs(number) <= MAX_EXACT_INTEGER else number
    if kind == "list_value":
        return [python_value(item) for item in value.list_value.values]
    if kind == "struct_value":
        return metadata_from_struct(value.struct_value)
    if kind in ("string_value", "bool_value"):
        return getattr(value, kind)
    return None


def metadata_from_struct(struct: Struct) -> dict[str, Any]:
    """Plain values; what metadata may not hold (nulls, objects) is left for validation to name."""
    return {key: python_value(value) for key, value in struct.fields.items()}


def moment_of(message: Any, name: str, field: str) -> datetime | None:
    """An optional Timestamp field as an aware datetime; InvalidRequestError naming ``field``
    when it lies outside years 1 to 9999 or its nanos outside a second."""
    if not message.HasField(name):
        return None
    try:
        return getattr(message, name).ToDatetime(tzinfo=UTC)
    except ValueError as error:
        raise InvalidRequestError(str(error), field=field) from error


def set_present(message: Any, values: Mapping[str, Any], prefix: str = "") -> None:
    """Set the optional fields whose value is not None."""
    for field, value in values.items():
        if value is not None:
            try:
                setattr(message, field, value)
            except (TypeError, ValueError) as error:
                raise InvalidRequestError(str(error), field=prefix + field) from error


def present(message: Any, names: Iterable[str]) -> dict[str, Any]:
    """The optional fields a message carries."""
    return {name: getattr(message, name) for name in names if message.HasField(name)}


def optional_field(message: Any, name: str) -> Any:
    """An optional field's value, or None when the message does not carry it."""
    return getattr(message, name) if message.HasField(name) else None


def plain_fields(message: Any, model: type[BaseModel]) -> dict[str, Any]:
    """The fields of ``message`` that ``model`` has and that hold no message and no enum, as
    the model takes them: repeated ones as tuples, maps as dicts, an optional one the message
    does not carry as None."""
    return {name: read(message, name) for name, read in plain_readers(message.DESCRIPTOR, model)}


Reader = Callable[[Any, str], Any]


@cache
def plain_readers(descriptor: Descriptor, model: type[BaseModel]) -> tuple[tuple[str, Reader], ...]:
    """The plain fields a message type shares with ``model``, each with what reads it: worked
    out once per pair, as a result's conversion reads every field of every match."""
    described = descriptor.fields_by_name
    return tuple(
        (name, reader_of(described[name]))
        for name in model.model_fields
        if name in described and is_plain(described[name])
    )


def is_plain(field: FieldDescriptor) -> bool:
    entry = field.message_type
    if entry is not None:
        return entry.GetOptions().map_entry and is_plain(entry.fields_by_name["value"])
    return field.enum_type is None


def reader_of(field: FieldDescriptor) -> Reader:
    if field.message_type is not None:
        return map_field
    if field.is_repeated:
        return repeated_field
    return optional_field if field.has_presence else getattr


def map_field(message: Any, name: str) -> dict[Any, Any]:
    return dict(getattr(message, name))


def repeated_field(message: Any, name: str) -> tuple[Any, ...]:
    return tuple(getattr(message, name))

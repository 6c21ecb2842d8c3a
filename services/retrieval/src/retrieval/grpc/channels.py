"""What both ends of a channel agree on: the largest message either way."""

from __future__ import annotations

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def message_size_options(max_message_bytes: int) -> list[tuple[str, int]]:
    """Channel options that cap messages both ways, for servers and clients alike."""
    return [
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.max_receive_message_length", max_message_bytes),
    ]

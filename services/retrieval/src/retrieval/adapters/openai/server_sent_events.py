"""The data of server-sent events (``text/event-stream``), read from the lines of a stream.

An event is its ``data:`` lines (one space after the colon dropped), joined by line breaks,
ended by a blank line. Comments (lines starting with ``:``) and the other fields (``event``,
``id``, ``retry``) carry nothing the chat model's stream needs and are skipped. An event the
stream ends without a blank line after still counts: servers that close right after their
last event send none.
"""

from __future__ import annotations

from collections.abc import AsyncIterator


async def event_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The data of each event in ``lines`` (without their line breaks), in order."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
            data = []
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value.removeprefix(" "))
    if data:
        yield "\n".join(data)

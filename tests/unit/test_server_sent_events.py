"""Reading the data of server-sent events from the lines of a stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from retrieval.adapters.openai.server_sent_events import event_data


async def lines_of(text: str) -> AsyncIterator[str]:
    for line in text.splitlines():
        yield line


async def data(text: str) -> list[str]:
    return [item async for item in event_data(lines_of(text))]


async def test_each_event_gives_its_data() -> None:
    assert await data('data: {"a": 1}\n\ndata: [DONE]\n\n') == ['{"a": 1}', "[DONE]"]


async def test_the_data_lines_of_one_event_are_joined_by_line_breaks() -> None:
    assert await data("data: first\ndata: second\n\ndata:third\n\n") == ["first\nsecond", "third"]


@pytest.mark.parametrize(
    "text",
    [
        ": keep-alive\n\ndata: x\n\n",
        "event: message\nid: 7\nretry: 100\ndata: x\n\n",
        "\n\n\ndata: x\n\n\n",
    ],
    ids=["comment", "other-fields", "blank-lines"],
)
async def test_comments_other_fields_and_extra_blank_lines_are_skipped(text: str) -> None:
    assert await data(text) == ["x"]


async def test_only_one_space_after_the_colon_is_dropped() -> None:
    assert await data("data:  two spaces\n\n") == [" two spaces"]


async def test_an_event_the_stream_ends_without_a_blank_line_after_still_counts() -> None:
    assert await data("data: a\n\ndata: [DONE]") == ["a", "[DONE]"]

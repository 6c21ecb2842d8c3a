"""A started application freezes what it loaded out of the garbage collector, until shutdown."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from retrieval.lifecycle import running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container


@pytest.mark.parametrize("freeze", [True, False])
async def test_what_the_application_loaded_leaves_the_collector_until_shutdown(
    tmp_path: Path, freeze: bool
) -> None:
    settings = Settings(data_dir=tmp_path, gc_freeze=freeze)
    async with running(settings, in_memory_container(settings)):
        frozen = gc.get_freeze_count()
    assert (frozen > 0) is freeze
    assert gc.get_freeze_count() == 0

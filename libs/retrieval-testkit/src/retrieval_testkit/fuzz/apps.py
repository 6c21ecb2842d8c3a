"""The application the targets that need one run against: the container's services on the
embedded indexes (in memory) and the in-memory doubles, the demo knowledge in two namespaces."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.files.document_files import load_documents
from retrieval.adapters.model_checked_index import ModelCheckedIndex
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_testkit.container import in_memory_container
from retrieval_testkit.hash_embedder import HashEmbedder
from retrieval_testkit.scripted_llm import ScriptedLlm

CORPUS_NAMESPACE = "fuzz"
NAMESPACES = (CORPUS_NAMESPACE, CORPUS_NAMESPACE, "default", "fuzz-other", "")
"""Namespaces a case names most often: the seeded ones (the default too), an empty one, none."""


@asynccontextmanager
async def seeded_application() -> AsyncIterator[Application]:
    with tempfile.TemporaryDirectory(prefix="retrieval-fuzz-") as data_dir:
        settings = Settings(data_dir=Path(data_dir))
        embedder, index = HashEmbedder(), EmbeddedVectorIndex()
        container = in_memory_container(
            settings,
            model_embedder=embedder,
            backend_index=index,
            vector_index=ModelCheckedIndex(
                index, model=embedder.model, dimension=embedder.dimension
            ),
            keyword_index=Bm25KeywordIndex(),
            llm=ScriptedLlm(),
        )
        async with running(settings, container) as app:
            documents = load_documents([KNOWLEDGE_DIR])
            for namespace in (CORPUS_NAMESPACE, settings.default_namespace):
                await app.ingestion.ingest(documents, namespace)
            yield app

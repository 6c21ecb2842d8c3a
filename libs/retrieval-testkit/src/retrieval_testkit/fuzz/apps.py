"""The application the targets that need one run against: the container's services on the
embedded indexes (in memory) and the in-memory doubles, the demo knowledge in two namespaces."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from retrieval.adapters.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.document_files import load_documents
from retrieval.adapters.exact_vector_index import ExactVectorIndex
from retrieval.container import Application
from retrieval.demo import KNOWLEDGE_DIR
from retrieval.settings import Settings
from retrieval_testkit.application import in_memory_application

CORPUS_NAMESPACE = "fuzz"
NAMESPACES = (CORPUS_NAMESPACE, CORPUS_NAMESPACE, "default", "fuzz-other", "")
"""Namespaces a case names most often: the seeded ones (the default too), an empty one, none."""


@asynccontextmanager
async def seeded_application() -> AsyncIterator[Application]:
    with tempfile.TemporaryDirectory(prefix="retrieval-fuzz-") as data_dir:
        settings = Settings(data_dir=Path(data_dir))
        async with in_memory_application(
            settings, index=ExactVectorIndex(), keywords=Bm25KeywordIndex()
        ) as app:
            documents = load_documents([KNOWLEDGE_DIR])
            for namespace in (CORPUS_NAMESPACE, settings.default_namespace):
                await app.ingestion.ingest(documents, namespace)
            yield app

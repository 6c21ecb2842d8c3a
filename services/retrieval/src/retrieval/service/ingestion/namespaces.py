"""The namespace a call writes or reads, and the generation each change of one advances."""

from __future__ import annotations

import structlog

from retrieval.domain.models import check_slug
from retrieval.errors import RetrievalError
from retrieval.ports.namespace_generations import NamespaceGenerations

log = structlog.get_logger("ingestion")


def namespace_or_default(namespace: str | None, default: str) -> str:
    """``namespace``, else ``default``, checked to be a name a store may be asked for."""
    return check_slug(namespace or default, "namespace")


async def advance_generation(generations: NamespaceGenerations, namespace: str) -> None:
    """Retire every replica's cached results of the namespace: after the stores changed
    (see ``retrieval.service.caching.result_cache``); a failure leaves them to their TTL."""
    try:
        await generations.advance(namespace)
    except RetrievalError as error:
        log.warning("ingest.generation_not_advanced", namespace=namespace, error=str(error))

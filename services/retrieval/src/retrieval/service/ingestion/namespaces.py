"""The generation each change of a namespace advances."""

from __future__ import annotations

import structlog

from retrieval.deadlines import undo_bound
from retrieval.errors import RetrievalError
from retrieval.ports.namespace_generations import NamespaceGenerations

log = structlog.get_logger("ingestion")


async def advance_generation(generations: NamespaceGenerations, namespace: str) -> None:
    """Retire every replica's cached results of the namespace: after the stores changed
    (see ``retrieval.service.caching.result_cache``); a failure, or the end of a stopped
    call's undo time, leaves them to their TTL."""
    try:
        async with undo_bound():
            await generations.advance(namespace)
    except RetrievalError as error:
        log.warning("ingest.generation_not_advanced", namespace=namespace, error=str(error))

"""Repair of what a crash, a failed rollback or an older version left in a namespace
(``retrieval.service.ingestion.reconciliation``), each repair retiring the namespace's cached
results."""

from __future__ import annotations

from retrieval.domain.models import check_slug
from retrieval.ports import Embedder
from retrieval.ports.document_ledger import DocumentLedger
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.ingestion.consistency import ChunkStores
from retrieval.service.ingestion.namespaces import advance_generation
from retrieval.service.ingestion.reconciliation import ReconcileReport, Reconciliation


class Repair:
    """Reconciles a namespace on demand, and recovers the writes stopped processes left."""

    def __init__(
        self,
        embedder: Embedder,
        stores: ChunkStores,
        ledger: DocumentLedger,
        generations: NamespaceGenerations,
        lease_wait_s: float,
    ) -> None:
        self._reconciliation = Reconciliation(embedder, stores, ledger, lease_wait_s)
        self._generations = generations

    async def reconcile(self, namespace: str, *, dry_run: bool = False) -> ReconcileReport:
        """Find, and unless ``dry_run`` repair, what a crash or a failure left behind."""
        namespace = check_slug(namespace, "namespace")
        try:
            return await self._reconciliation.run(namespace, dry_run=dry_run)
        finally:
            if not dry_run:
                await advance_generation(self._generations, namespace)

    async def recover(self) -> int:
        """Repair what this host's writers left when they ended without releasing their
        documents (``Reconciliation.recover``); returns how many documents."""
        repaired = await self._reconciliation.recover()
        for namespace in repaired:
            await advance_generation(self._generations, namespace)
        return sum(repaired.values())

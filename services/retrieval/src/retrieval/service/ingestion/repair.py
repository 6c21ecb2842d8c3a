"""Repair of what a crash, a failed rollback or an older version left in a namespace
(``retrieval.service.ingestion.reconciliation``), each repair retiring the namespace's cached
results."""

from __future__ import annotations

from dataclasses import dataclass

from retrieval.domain.models import check_slug
from retrieval.ports.namespace_generations import NamespaceGenerations
from retrieval.service.ingestion.namespaces import advance_generation
from retrieval.service.ingestion.reconciliation import ReconcileReport, Reconciliation


@dataclass(frozen=True, eq=False)
class Repair:
    """Reconciles a namespace on demand, and recovers the writes stopped processes left."""

    reconciliation: Reconciliation
    generations: NamespaceGenerations

    async def reconcile(self, namespace: str, *, dry_run: bool = False) -> ReconcileReport:
        """Find, and unless ``dry_run`` repair, what a crash or a failure left behind."""
        namespace = check_slug(namespace, "namespace")
        try:
            return await self.reconciliation.run(namespace, dry_run=dry_run)
        finally:
            if not dry_run:
                await advance_generation(self.generations, namespace)

    async def recover(self) -> int:
        """Repair what this host's writers left when they ended without releasing their
        documents (``Reconciliation.recover``); returns how many documents."""
        repaired = await self.reconciliation.recover()
        for namespace in repaired:
            await advance_generation(self.generations, namespace)
        return sum(repaired.values())

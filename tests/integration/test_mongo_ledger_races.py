"""Races on the MongoDB ledger: a claim racing a release reports the document released
(claim again), never a KeyError; writers lining up for one document get it in the order they
first asked, none of them starved."""

from __future__ import annotations

import asyncio

from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger, key
from retrieval.domain.ledger import RELEASED, Lease
from retrieval.service.ingestion.leases import claim_documents

NS = "races"
HOLDER = Lease(owner="holder", host="elsewhere", pid=1)
CLAIMANT = Lease(owner="claimant", host="elsewhere", pid=2)


class ReleasedDuringClaim:
    """A collection whose bulk writes are followed at once by another writer's release of
    ``document_id`` (its lease unset, or the empty record removed)."""

    def __init__(self, collection, document_id: str, remove: bool) -> None:
        self._collection = collection
        self._key = key(NS, document_id)
        self._remove = remove

    def __getattr__(self, name: str):
        return getattr(self._collection, name)

    async def bulk_write(self, *args, **kwargs):
        result = await self._collection.bulk_write(*args, **kwargs)
        if self._remove:
            await self._collection.delete_one({"_id": self._key})
        else:
            await self._collection.update_one({"_id": self._key}, {"$unset": {"lease": ""}})
        return result


async def test_a_lease_released_during_the_claim_is_reported_released(
    mongo_ledger: MongoDocumentLedger,
) -> None:
    for remove in (False, True):
        free, held = f"free-{remove}", f"held-{remove}"
        await mongo_ledger.claim(NS, [held], HOLDER)
        racing = MongoDocumentLedger(ReleasedDuringClaim(mongo_ledger._collection, held, remove))
        claim = await racing.claim(NS, [free, held], CLAIMANT)
        assert claim.held == {held: RELEASED}
        assert list(claim.records) == [free]
        again = await claim_documents(mongo_ledger, NS, [free, held], CLAIMANT, 1.0)
        assert sorted(again.records) == [free, held]


async def test_writers_of_one_document_get_it_in_the_order_they_asked(
    mongo_ledger: MongoDocumentLedger,
) -> None:
    order: list[str] = []

    async def lined_up(owner: str) -> None:
        """Until ``owner`` waits in the document's line or has had its turn."""
        while owner not in order:
            document = await mongo_ledger._collection.find_one({"_id": key(NS, "shared")}) or {}
            held = (document.get("lease") or {}).get("owner")
            if owner in {held, *(waiter["owner"] for waiter in document.get("queue", []))}:
                return
            await asyncio.sleep(0.01)

    async def write(n: int) -> None:
        if n:
            await lined_up(f"writer-{n - 1}")
        lease = Lease(owner=f"writer-{n}", host="elsewhere", pid=n)
        claim = await claim_documents(mongo_ledger, NS, ["shared"], lease, 30.0)
        assert list(claim.records) == ["shared"]
        order.append(lease.owner)
        await asyncio.sleep(0.3)
        await mongo_ledger.release(NS, ["shared"], lease)

    await asyncio.gather(*(write(n) for n in range(8)))
    assert order == [f"writer-{n}" for n in range(8)]

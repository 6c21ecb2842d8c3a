"""Claiming documents: writers of overlapping sets, in any order, never wait on each other in
a circle."""

from __future__ import annotations

import asyncio
import time

import pytest

from retrieval.domain.ledger import Lease
from retrieval.errors import BackendUnavailableError
from retrieval.service.ingestion.leases import claim_documents
from retrieval_testkit import InMemoryDocumentLedger

NS = "leases"
IDS = [f"d{n}" for n in range(5)]
WAIT_S = 5.0


def lease(owner: str) -> Lease:
    return Lease(owner=owner, host="elsewhere", pid=1)


async def test_writers_in_opposite_orders_each_get_every_document_in_turn() -> None:
    """A holds d0-d3 and wants d4; B holds d4 and wants d0-d3: one of them gives way at
    once, so the other claims all five, and the first gets them once they are released."""
    ledger = InMemoryDocumentLedger()
    first, second = lease("a"), lease("b")
    await ledger.claim(NS, IDS[:4], first)
    await ledger.claim(NS, IDS[4:], second)
    started = time.monotonic()
    claims = [
        asyncio.create_task(claim_documents(ledger, NS, IDS, first, WAIT_S)),
        asyncio.create_task(claim_documents(ledger, NS, IDS[::-1], second, WAIT_S)),
    ]
    done, _ = await asyncio.wait(claims, return_when=asyncio.FIRST_COMPLETED)
    (winner,) = done
    assert sorted(winner.result().records) == IDS
    assert winner.result().held == {}
    assert time.monotonic() - started < WAIT_S / 2
    winning = first if winner is claims[0] else second
    await ledger.release(NS, IDS, winning)
    (loser,) = [claim for claim in claims if claim is not winner]
    assert sorted((await loser).records) == IDS


async def test_a_writer_that_gives_way_holds_nothing_it_does_not_need_first() -> None:
    ledger = InMemoryDocumentLedger()
    await ledger.claim(NS, ["d2"], lease("other"))
    waiting = asyncio.create_task(claim_documents(ledger, NS, IDS, lease("me"), WAIT_S))
    await asyncio.sleep(0.2)
    taken = await ledger.claim(NS, ["d3", "d4"], lease("third"))
    assert sorted(taken.records) == ["d3", "d4"]
    await ledger.release(NS, ["d2", "d3", "d4"], lease("other"))
    await ledger.release(NS, ["d3", "d4"], lease("third"))
    claim = await waiting
    assert sorted(claim.records) == IDS


async def test_at_the_deadline_the_documents_not_claimed_are_reported_held() -> None:
    ledger = InMemoryDocumentLedger()
    await ledger.claim(NS, ["d1"], lease("other"))
    claim = await claim_documents(ledger, NS, IDS, lease("me"), 0.3)
    assert sorted(claim.records) == ["d0"]
    assert sorted(claim.held) == ["d1", "d2", "d3", "d4"]
    again = await ledger.claim(NS, ["d2", "d3", "d4"], lease("third"))
    assert sorted(again.records) == ["d2", "d3", "d4"]


class FailsAfterTaking(InMemoryDocumentLedger):
    """A ledger whose first claim takes the leases and then fails, as a bulk write whose
    reply is lost does."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    async def claim(self, namespace, document_ids, lease, *, taking_over=()):
        claim = await super().claim(namespace, document_ids, lease, taking_over=taking_over)
        if self.failures:
            self.failures -= 1
            raise BackendUnavailableError("the reply was lost")
        return claim


async def test_a_claim_that_fails_gives_back_what_it_took() -> None:
    ledger = FailsAfterTaking()
    with pytest.raises(BackendUnavailableError):
        await claim_documents(ledger, NS, IDS, lease("me"), WAIT_S)
    assert sorted((await ledger.claim(NS, IDS, lease("other"))).records) == IDS

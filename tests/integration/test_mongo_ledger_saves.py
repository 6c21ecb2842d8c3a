"""Saves on the MongoDB ledger, on a real wire-protocol server: a group's records in one
update statement (the server commits each statement on its own), each stored as given."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from pymongo import AsyncMongoClient, monitoring

from retrieval.adapters.mongo.document_ledger import MongoDocumentLedger
from retrieval.domain.ledger import DocumentState, Lease, Provenance
from retrieval.errors import DocumentBusyError

NS = "saves"
WRITER = Lease(owner="writer", host="here", pid=1)
IDS = ["plain", "with.dot", "$dollar", "slash/in/it"]


class Updates(monitoring.CommandListener):
    """The statements of every ``update`` command sent."""

    def __init__(self) -> None:
        self.statements: list[list[dict]] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        if event.command_name == "update":
            self.statements.append(list(event.command["updates"]))

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture
async def listened(mongo_uri: str) -> AsyncIterator[tuple[MongoDocumentLedger, Updates]]:
    updates = Updates()
    client: AsyncMongoClient = AsyncMongoClient(mongo_uri, event_listeners=[updates])
    ledger = MongoDocumentLedger(client[f"saves_{uuid.uuid4().hex[:12]}"]["documents"])
    await ledger.ensure_indexes()
    yield ledger, updates
    await client.close()


async def test_a_groups_records_are_saved_in_one_statement_each_as_given(listened) -> None:
    ledger, updates = listened
    claim = await ledger.claim(NS, IDS, WRITER)
    provenance = Provenance(title="t", written_at=datetime(2026, 1, 2, tzinfo=UTC))
    pending = [
        record.begin([f"{record.document_id}#{n}" for n in range(3)], f"fp-{n}", provenance)
        for n, record in enumerate(claim.records.values())
    ]
    updates.statements.clear()

    await ledger.save(pending, WRITER)
    committed = [record.commit() for record in pending]
    await ledger.save(committed, WRITER)

    assert [len(statements) for statements in updates.statements] == [1, 1]
    stored = await ledger.get_many(NS, IDS)
    assert stored == {record.document_id: record for record in committed}
    assert {record.state for record in stored.values()} == {DocumentState.COMMITTED}


async def test_a_save_of_records_another_writer_holds_is_refused(listened) -> None:
    ledger, _ = listened
    claim = await ledger.claim(NS, IDS[:2], WRITER)
    other = Lease(owner="other", host="here", pid=2)
    pending = [record.begin(["c"], "fp", None) for record in claim.records.values()]

    with pytest.raises(DocumentBusyError):
        await ledger.save(pending, other)

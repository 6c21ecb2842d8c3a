"""What every DocumentLedger must do. Subclass and provide ``make_ledger(lease_s)`` (empty)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from retrieval.domain.ledger import DocumentRecord, DocumentState, Lease, Provenance
from retrieval.domain.provenance import Source
from retrieval.errors import DocumentBusyError
from retrieval.ports.document_ledger import DocumentLedger

NS = "contract"
MINE = Lease(owner="mine", host="host-a", pid=1)
THEIRS = Lease(owner="theirs", host="host-b", pid=2)
LATER = Lease(owner="later", host="host-c", pid=3)

MakeLedger = Callable[[float], DocumentLedger]


def committed(document_id: str, *chunks: str, namespace: str = NS) -> DocumentRecord:
    return DocumentRecord(
        namespace=namespace,
        document_id=document_id,
        state=DocumentState.COMMITTED,
        fingerprint=f"fp-{document_id}",
        chunk_ids=chunks,
    )


def pending(document_id: str) -> DocumentRecord:
    written = datetime(2026, 11, 26, 8, 30, tzinfo=UTC)
    return DocumentRecord(namespace=NS, document_id=document_id).begin(
        [f"{document_id}#0"], f"fp-{document_id}", Provenance(title="P", written_at=written)
    )


async def all_records(ledger: DocumentLedger, namespace: str = NS) -> list[DocumentRecord]:
    return [record async for page in ledger.list_records(namespace) for record in page]


class DocumentLedgerContract:
    @pytest.fixture
    def ledger(self, make_ledger: MakeLedger) -> DocumentLedger:
        return make_ledger(60.0)

    async def test_a_new_document_is_claimed_with_an_empty_record(self, ledger) -> None:
        claim = await ledger.claim(NS, ["a"], MINE)
        assert claim.records == {"a": DocumentRecord(namespace=NS, document_id="a")}
        assert claim.held == {}
        assert await ledger.get_many(NS, ["a"]) == {}

    async def test_saved_records_are_read_back(self, ledger) -> None:
        await ledger.claim(NS, ["a", "b"], MINE)
        records = [committed("a", "a#1", "a#2"), committed("b")]
        await ledger.save(records, MINE)
        assert await ledger.get_many(NS, ["a", "b", "c"]) == {"a": records[0], "b": records[1]}

    async def test_provenance_is_read_back_as_saved(self, ledger) -> None:
        await ledger.claim(NS, ["a"], MINE)
        written = datetime(2026, 11, 26, 8, 30, 15, 123000, tzinfo=UTC)
        source = Source(
            uri="/kb/a.pdf", root="/kb", file_type="pdf", size=1234, modified_at=written
        )
        begun = committed("a", "a#1").begin(
            ["a#2"], "fp-2", Provenance(title="Alpha", source=source, written_at=written)
        )
        await ledger.save([begun], MINE)
        assert await ledger.get_many(NS, ["a"]) == {"a": begun}
        await ledger.save([begun.commit()], MINE)
        assert await ledger.get_many(NS, ["a"]) == {"a": begun.commit()}

    async def test_a_record_that_never_held_a_version_is_not_read_back(self, ledger) -> None:
        await ledger.claim(NS, ["a"], MINE)
        abandoned = DocumentRecord(namespace=NS, document_id="a", stale=("a#old",))
        await ledger.save([abandoned], MINE)
        assert await ledger.get_many(NS, ["a"]) == {}
        assert await all_records(ledger) == [abandoned]

    async def test_a_held_document_is_not_claimed_by_another_owner(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        claim = await ledger.claim(NS, ["a", "b"], MINE)
        assert set(claim.records) == {"b"}
        assert claim.held == {"a": THEIRS}

    async def test_claiming_again_keeps_the_saved_record(self, ledger) -> None:
        await ledger.claim(NS, ["a"], MINE)
        await ledger.save([committed("a", "a#1")], MINE)
        claim = await ledger.claim(NS, ["a"], MINE)
        assert claim.records == {"a": committed("a", "a#1")}

    async def test_a_lease_can_be_taken_over(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        claim = await ledger.claim(NS, ["a"], MINE, taking_over={"theirs"})
        assert set(claim.records) == {"a"}
        with pytest.raises(DocumentBusyError):
            await ledger.save([committed("a")], THEIRS)

    async def test_a_holder_taken_over_is_replaced_at_once_ahead_of_its_waiters(
        self, ledger
    ) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        assert (await ledger.claim(NS, ["a"], LATER)).held == {"a": THEIRS}
        claim = await ledger.claim(NS, ["a"], MINE, taking_over={"theirs"})
        assert set(claim.records) == {"a"}
        await ledger.release(NS, ["a"], MINE)
        assert set((await ledger.claim(NS, ["a"], LATER)).records) == {"a"}

    async def test_an_expired_lease_is_free(self, make_ledger: MakeLedger) -> None:
        ledger = make_ledger(0.05)
        await ledger.claim(NS, ["a"], THEIRS)
        await asyncio.sleep(0.2)
        claim = await ledger.claim(NS, ["a"], MINE)
        assert set(claim.records) == {"a"}

    async def test_a_waiter_goes_before_a_later_claimer(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        assert (await ledger.claim(NS, ["a"], MINE)).held == {"a": THEIRS}
        await ledger.release(NS, ["a"], THEIRS)
        assert (await ledger.claim(NS, ["a"], LATER)).held == {"a": MINE}
        assert set((await ledger.claim(NS, ["a"], MINE)).records) == {"a"}
        await ledger.release(NS, ["a"], MINE)
        assert set((await ledger.claim(NS, ["a"], LATER)).records) == {"a"}

    async def test_waiters_keep_the_order_they_first_asked_in(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        for waiter in (MINE, LATER, MINE, LATER):
            await ledger.claim(NS, ["a"], waiter)
        await ledger.release(NS, ["a"], THEIRS)
        assert (await ledger.claim(NS, ["a"], LATER)).held == {"a": MINE}
        assert set((await ledger.claim(NS, ["a"], MINE)).records) == {"a"}

    async def test_the_holder_keeps_its_documents_whoever_waits(self, ledger) -> None:
        await ledger.claim(NS, ["a"], MINE)
        await ledger.claim(NS, ["a"], THEIRS)
        assert set((await ledger.claim(NS, ["a"], MINE)).records) == {"a"}

    async def test_a_waiter_taken_over_loses_its_place(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        await ledger.claim(NS, ["a"], MINE)
        await ledger.release(NS, ["a"], THEIRS)
        claim = await ledger.claim(NS, ["a"], LATER, taking_over={"mine"})
        assert set(claim.records) == {"a"}

    async def test_a_waiter_that_stops_asking_loses_its_place(
        self, make_ledger: MakeLedger
    ) -> None:
        ledger = make_ledger(0.05)
        await ledger.claim(NS, ["a"], THEIRS)
        await ledger.claim(NS, ["a"], MINE)
        await asyncio.sleep(0.2)
        assert set((await ledger.claim(NS, ["a"], LATER)).records) == {"a"}

    async def test_saving_without_the_lease_fails(self, ledger) -> None:
        with pytest.raises(DocumentBusyError):
            await ledger.save([committed("a")], MINE)
        await ledger.claim(NS, ["a"], THEIRS)
        with pytest.raises(DocumentBusyError) as raised:
            await ledger.save([committed("a")], MINE)
        assert raised.value.document_id == "a"
        assert await ledger.get_many(NS, ["a"]) == {}

    async def test_release_frees_the_document_and_drops_empty_records(self, ledger) -> None:
        await ledger.claim(NS, ["a", "b", "c"], MINE)
        emptied = committed("b").model_copy(update={"fingerprint": None})
        await ledger.save([committed("a", "a#1"), emptied], MINE)
        await ledger.release(NS, ["a", "b", "c"], MINE)
        assert [record.document_id for record in await all_records(ledger)] == ["a"]
        claim = await ledger.claim(NS, ["a"], THEIRS)
        assert claim.records == {"a": committed("a", "a#1")}

    async def test_release_of_someone_elses_lease_does_nothing(self, ledger) -> None:
        await ledger.claim(NS, ["a"], THEIRS)
        await ledger.release(NS, ["a"], MINE)
        assert (await ledger.claim(NS, ["a"], MINE)).held == {"a": THEIRS}

    async def test_unsettled_are_pending_records_no_lease_holds_and_the_hosts_leases(
        self, make_ledger
    ) -> None:
        ledger = make_ledger(0.2)
        for owner, document_ids in ((MINE, ["b", "a"]), (THEIRS, ["p", "q", "r"])):
            await ledger.claim(NS, document_ids, owner)
        await ledger.save([committed("b", "b#0")], MINE)
        await ledger.save([pending(i) for i in ("p", "q", "r")], THEIRS)
        await ledger.release(NS, ["p"], THEIRS)
        assert await ledger.unsettled(MINE.host) == [
            (DocumentRecord(namespace=NS, document_id="a"), MINE),
            (committed("b", "b#0"), MINE),
            (pending("p"), None),
        ]
        await asyncio.sleep(0.3)
        await ledger.claim(NS, ["r"], THEIRS)
        await ledger.release(NS, ["a", "b"], MINE)
        assert await ledger.unsettled(MINE.host) == [(pending("p"), None), (pending("q"), None)]
        assert await ledger.unsettled(THEIRS.host) == [
            (pending("p"), None),
            (pending("q"), THEIRS),
            (pending("r"), THEIRS),
        ]

    async def test_records_are_listed_in_pages_by_namespace(self, ledger) -> None:
        ids = [f"doc-{n:04d}" for n in range(1100)]
        await ledger.claim(NS, ids, MINE)
        await ledger.save([committed(i, f"{i}#0") for i in ids], MINE)
        await ledger.claim("other", ["x"], MINE)
        await ledger.save([committed("x", namespace="other")], MINE)
        pages = [page async for page in ledger.list_records(NS)]
        assert len(pages) > 1
        assert [record.document_id for page in pages for record in page] == ids
        assert [record.document_id for record in await all_records(ledger, "other")] == ["x"]

    async def test_records_are_found_by_their_source(self, ledger) -> None:
        def read_from(document_id: str, uri: str, namespace: str = NS) -> DocumentRecord:
            provenance = Provenance(
                title=document_id,
                source=Source(uri=uri),
                written_at=datetime(2026, 11, 26, 8, 30, tzinfo=UTC),
            )
            return committed(document_id, namespace=namespace).model_copy(
                update={"provenance": provenance}
            )

        await ledger.claim(NS, ["b", "a", "c", "d", "never"], MINE)
        await ledger.save(
            [read_from("b", "/kb/x.md"), read_from("a", "/kb/x.md"), read_from("c", "/kb/y.md")],
            MINE,
        )
        await ledger.save([committed("d")], MINE)
        await ledger.claim("other", ["e"], MINE)
        await ledger.save([read_from("e", "/kb/x.md", namespace="other")], MINE)

        found = await ledger.with_sources(NS, {"/kb/x.md", "/kb/y.md", "/kb/z.md"})
        assert [(r.document_id, r.source) for r in found] == [
            ("a", "/kb/x.md"),
            ("b", "/kb/x.md"),
            ("c", "/kb/y.md"),
        ]
        assert await ledger.with_sources(NS, {"/kb"}) == []
        assert await ledger.with_sources(NS, set()) == []

    async def test_namespaces_are_those_holding_a_record(self, ledger) -> None:
        assert await ledger.namespaces() == []
        for namespace in ("other", NS):
            await ledger.claim(namespace, ["a"], MINE)
            await ledger.save([committed("a", namespace=namespace)], MINE)
        assert await ledger.namespaces() == sorted([NS, "other"])
        await ledger.delete_namespace("other")
        assert await ledger.namespaces() == [NS]

    async def test_delete_namespace(self, ledger) -> None:
        await ledger.claim(NS, ["a", "b"], MINE)
        await ledger.save([committed("a"), committed("b")], MINE)
        await ledger.claim("other", ["x"], MINE)
        await ledger.save([committed("x", namespace="other")], MINE)
        assert await ledger.delete_namespace(NS) == 2
        assert await all_records(ledger) == []
        assert len(await all_records(ledger, "other")) == 1

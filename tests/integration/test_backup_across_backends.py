"""A namespace backed up from the embedded stack (embedded vector index, BM25, MongoDB) and
restored onto Pinecone (the stand-ins) and MongoDB, then back: the same chunks in every
store, the same graph records, the same dense results, audit-clean stores at each end. The
round trip is the one `retrieval bench backup-round-trip` makes of 10,000 chunks."""

from __future__ import annotations

from pathlib import Path

from retrieval_bench.backup_round_trip import Route, pinecone_standins, round_trip


async def test_embedded_to_pinecone_and_mongodb_and_back(tmp_path: Path) -> None:
    with pinecone_standins() as pinecone:
        trip = await round_trip(60, Route(tmp_path, pinecone))
    embedded = trip.states["embedded"]
    assert (trip.documents, trip.chunks, len(embedded.records)) == (20, 60, 20)
    assert embedded.clean
    assert all(embedded.scores)
    assert len(embedded.graph) == 60
    assert trip.states["pinecone"] == embedded
    assert trip.states["embedded_again"] == embedded

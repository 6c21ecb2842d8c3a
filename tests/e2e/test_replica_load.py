"""Readers and writers on two replicas over the lagging stand-ins, the same documents
written in opposite orders and deleted now and then: no INTERNAL error, no read stale past
the bound, no document failed for a lease, and stores that pair up afterwards."""

from __future__ import annotations

from pathlib import Path

from retrieval_testkit.replica_load import run_load
from retrieval_testkit.replica_set import replica_set


async def test_two_replicas_under_load_stay_fresh_and_consistent(
    tmp_path: Path, mongo_uri: str
) -> None:
    async with replica_set(tmp_path, mongo_uri, replicas=2, lag_s=0.5) as replicas:
        report = await run_load(replicas, tmp_path, seconds=10.0, writers=2, readers=1)
    assert report["writes"] > 20
    assert report["reads"] > 20
    assert report["errors_by_status"] == {}
    assert report["stale_reads"] == 0
    assert report["lease_failures"] == 0
    assert report["audit_mismatches"] == 0

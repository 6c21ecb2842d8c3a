"""A compaction's rows take the writes made while it ran without being copied again: that copy
would run on the event loop, under the index's write lock."""

from __future__ import annotations

import numpy as np

from retrieval.adapters.embedded_index.rows import NamespaceRows


def address(rows: NamespaceRows) -> int:
    return rows.vectors.__array_interface__["data"][0]


def test_compacted_rows_take_appends_in_place() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(1_000, 8)).astype(np.float32)
    rows = NamespaceRows([f"r{n}" for n in range(1_000)], vectors, [{} for _ in range(1_000)])
    rows.delete(("r3",))
    dense = rows.freeze().dense()
    before = address(dense)

    dense.upsert(("new",), rng.normal(size=(1, 8)).astype(np.float32), ({},))

    assert address(dense) == before
    assert dense.size == 1_000
    assert np.array_equal(dense.vectors[:3], vectors[:3])
    assert np.array_equal(dense.vectors[3:999], vectors[4:])

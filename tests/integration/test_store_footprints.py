"""What the embedded stores occupy on disk and in memory, measured on real files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from retrieval.adapters.data_directory.disk_usage import directory_bytes
from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.adapters.embedded_index.vector_index import EmbeddedVectorIndex
from retrieval.adapters.mongo.embedded_server import EmbeddedMongoStorage
from retrieval.domain.keywords import KeywordRecord
from retrieval.domain.vectors import VectorRecord
from retrieval.factories.embedded import store_footprints
from retrieval.settings import Settings

DIMENSION = 8


def vectors(count: int, prefix: str) -> list[VectorRecord]:
    values = np.random.default_rng(count).normal(size=(count, DIMENSION)).tolist()
    return [VectorRecord(id=f"{prefix}{n}", values=row) for n, row in enumerate(values)]


def file_sizes(directory: Path) -> int:
    return sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())


async def test_the_exact_index_holds_vectors_times_dimension_float32s(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex(tmp_path)
    await index.upsert(vectors(5, "a"), namespace="one")
    await index.upsert(vectors(3, "b"), namespace="two")
    footprint = await index.footprint()
    assert footprint.memory_bytes == 8 * DIMENSION * 4
    assert footprint.disk_bytes == file_sizes(tmp_path) > footprint.memory_bytes
    await index.delete(namespace="one", delete_all=True)
    assert (await index.footprint()).memory_bytes == 3 * DIMENSION * 4
    await index.close()


async def test_the_keyword_index_counts_its_files_and_its_built_score_matrices(
    tmp_path: Path,
) -> None:
    index = Bm25KeywordIndex(tmp_path)
    records = [KeywordRecord(id=f"r{n}", text=f"tea bush {n} blister blight") for n in range(4)]
    await index.upsert(records, namespace="ns")
    before = await index.footprint()
    assert before.disk_bytes == file_sizes(tmp_path) > 0
    assert before.memory_bytes == 0
    await index.query("blister", top_k=2, namespace="ns")
    assert (await index.footprint()).memory_bytes > 0
    await index.close()


@pytest.mark.parametrize("store", [EmbeddedVectorIndex, Bm25KeywordIndex])
async def test_an_index_kept_in_memory_has_no_disk(store: type) -> None:
    assert (await store().footprint()).disk_bytes is None


async def test_the_embedded_mongodb_is_the_size_of_its_data_directory(tmp_path: Path) -> None:
    storage = tmp_path / "mongo"
    (storage / "journal").mkdir(parents=True)
    (storage / "collection-0.wt").write_bytes(b"x" * 4096)
    (storage / "journal" / "WiredTigerLog.1").write_bytes(b"y" * 1000)
    footprint = await EmbeddedMongoStorage(storage).footprint()
    assert footprint.disk_bytes == 5096
    assert footprint.memory_bytes is None


def test_a_directory_not_yet_created_occupies_nothing(tmp_path: Path) -> None:
    assert directory_bytes(tmp_path / "absent") == 0


def test_only_embedded_stores_have_a_footprint(tmp_path: Path) -> None:
    index = EmbeddedVectorIndex()
    embedded = store_footprints(Settings(data_dir=tmp_path, _env_file=None), [index])
    assert embedded[0] is index
    assert isinstance(embedded[1], EmbeddedMongoStorage)
    assert len(embedded) == 2
    with_mongodb_server = Settings(
        data_dir=tmp_path, mongodb_uri="mongodb://db.example:27017", _env_file=None
    )
    assert store_footprints(with_mongodb_server, []) == []

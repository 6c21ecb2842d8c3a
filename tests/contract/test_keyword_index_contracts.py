from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from retrieval.adapters.embedded_index.bm25_keyword_index import Bm25KeywordIndex
from retrieval.domain.keywords import KeywordRecord
from retrieval.ports.keyword_index import KeywordIndex
from retrieval_testkit.contracts import KeywordIndexContract
from retrieval_testkit.contracts import keyword_index as contract
from retrieval_testkit.in_memory_keyword_index import InMemoryKeywordIndex


class TestInMemoryKeywordIndex(KeywordIndexContract):
    @pytest.fixture
    def index(self) -> InMemoryKeywordIndex:
        return InMemoryKeywordIndex()


class TestBm25KeywordIndexInMemory(KeywordIndexContract):
    @pytest.fixture
    def index(self) -> Bm25KeywordIndex:
        return Bm25KeywordIndex()


class TestBm25KeywordIndexOnDisk(KeywordIndexContract):
    @pytest.fixture
    async def index(self, tmp_path: Path) -> AsyncIterator[Bm25KeywordIndex]:
        index = Bm25KeywordIndex(tmp_path / "keywords")
        yield index
        await index.close()


CORPUS = [
    KeywordRecord(id="p1", text="Tea plants need pruning; pruned tea plants flush again."),
    KeywordRecord(id="p2", text="Blister blight spreads in wet weather.", metadata={"year": 2020}),
    KeywordRecord(id="p3", text="Monsoon rain, then drought: weather shapes every tea harvest."),
    KeywordRecord(id="p4", text="Plucking two leaves and a bud", metadata={"year": 2023}),
    KeywordRecord(id="p5", text="The and of it"),
    KeywordRecord(
        id="p6",
        text="Copper sprays against blister blight, repeated after heavy rain on young tea.",
        metadata={"year": 2024},
    ),
]
QUERIES = [
    ("tea", None),
    ("blister blight in the rain", None),
    ("weather weather drought pruning", None),
    ("plucked leaves of young tea", {"year": {"$gte": 2023}}),
    ("tea rain", {"$or": [{"year": {"$lt": 2021}}, {"year": {"$exists": False}}]}),
]


@pytest.mark.parametrize(("text", "flt"), QUERIES)
async def test_bm25s_scores_are_the_written_out_bm25(text: str, flt: dict | None) -> None:
    reference, index = InMemoryKeywordIndex(), Bm25KeywordIndex()
    for keywords in (reference, index):
        await keywords.upsert(CORPUS, namespace="ns")
    expected = await reference.query(text, top_k=10, namespace="ns", filter=flt)
    found = await index.query(text, top_k=10, namespace="ns", filter=flt)
    assert expected
    assert [m.id for m in found] == [m.id for m in expected]
    assert [m.score for m in found] == pytest.approx([m.score for m in expected], abs=1e-4)


@pytest.fixture(params=["in-memory", "bm25s"])
def index(request: pytest.FixtureRequest) -> KeywordIndex:
    return InMemoryKeywordIndex() if request.param == "in-memory" else Bm25KeywordIndex()


async def test_a_text_of_stopwords_is_kept_but_never_found(index: KeywordIndex) -> None:
    await index.upsert([*CORPUS, KeywordRecord(id="p7", text="?!")], namespace="ns")
    assert await index.count("ns") == 7
    assert [page async for page in index.list_ids("ns", prefix="p")] == [
        ["p1", "p2", "p3", "p4", "p5", "p6", "p7"]
    ]
    for text in ["the and of it", "?!", "tea", "blight"]:
        found = await index.query(text, top_k=10, namespace="ns")
        assert {"p5", "p7"}.isdisjoint(m.id for m in found)
    await index.delete(namespace="ns", ids=["p5", "p7"])
    assert await index.count("ns") == 5


async def test_a_namespace_of_texts_without_terms_finds_nothing(index: KeywordIndex) -> None:
    await index.upsert([KeywordRecord(id="x", text="the")], namespace="ns")
    assert await index.query("the tea", top_k=3, namespace="ns") == []


async def test_words_are_found_by_their_stem(index: KeywordIndex) -> None:
    await index.upsert(CORPUS, namespace="ns")
    found = await index.query("plucked leaf", top_k=3, namespace="ns")
    assert [m.id for m in found] == ["p4"]


@pytest.mark.parametrize("bm25", [InMemoryKeywordIndex, Bm25KeywordIndex])
async def test_bm25_ranks_a_rarer_shared_word_higher(bm25: type) -> None:
    """Inverse document frequency: a learned sparse model need not do this, so it is not
    part of the contract every keyword index meets."""
    index = bm25()
    await index.upsert(contract.CORPUS, contract.NS)
    found = await contract.ids(index, "tea copper")
    assert found[0] == "d"
    assert sorted(found) == ["a", "b", "c", "d", "e"]

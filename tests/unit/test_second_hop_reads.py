"""What the second hop reads of the graph: the lookup only when the candidates' own records
leave a source's links open, and the candidates' records kept by chunk id."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.domain.chunk_identity import document_of
from retrieval.domain.graph import GraphRecord
from retrieval.domain.models import RagChunk, RetrievalQuery
from retrieval.domain.names import name_key, names_in
from retrieval.domain.ranking.candidate import Candidate
from retrieval.domain.ranking.links import follow_links
from retrieval.domain.stage_names import StageName
from retrieval.service.caching.remembered_generations import RememberedGenerations
from retrieval.service.retrieval.pipeline import PipelineState, SearchPlan
from retrieval.service.retrieval.pipeline.graph_leads import GraphLeads
from retrieval.service.retrieval.pipeline.second_hop import NAMES_SEARCHED, SecondHop, linked
from retrieval_testkit import InMemoryGraphStore
from retrieval_testkit.in_memory_namespace_generations import InMemoryNamespaceGenerations
from retrieval_testkit.multi_hop_corpus import FANS, NS, TEA, chunk
from retrieval_testkit.stages import offline_graph

LEADS = chunk("leads", "Leads", "It names Alma Reville, Bo Widerberg, Newark and Ant & Dec.")
REVILLE = chunk("reville", "Alma Reville", "Alma Reville was a screenwriter.")
WIDERBERG = chunk("widerberg", "Bo Widerberg", "Bo Widerberg was a director.")
NEWARK = chunk("newark", "Newark, New Jersey", "Newark is a city in New Jersey.")
DUO = chunk("duo", "Ant &amp; Dec", "Ant & Dec are a duo of presenters.")
PLAIN = chunk("plain", "Plain", "a text that names nothing.")
CORPUS = (LEADS, REVILLE, WIDERBERG, NEWARK, DUO, TEA, PLAIN, FANS)


class CountingGraph(InMemoryGraphStore):
    """Counts the records read and the entities looked up."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []
        self.asked: list[str] = []

    async def get_many(self, ids: Sequence[str], namespace: str) -> dict[str, GraphRecord]:
        self.read += ids
        return await super().get_many(ids, namespace)

    async def about(self, entities: Sequence[str], **kwargs: Any) -> list[GraphRecord]:
        self.asked += entities
        return await super().about(entities, **kwargs)


async def written(corpus: Sequence[RagChunk] = CORPUS) -> CountingGraph:
    graph = offline_graph(CountingGraph())
    await graph.add(corpus, NS)
    assert isinstance(graph.store, CountingGraph)
    return graph.store


def ranking(*chunks: RagChunk) -> PipelineState:
    state = PipelineState.start(RetrievalQuery(query="Who?"), NS, SearchPlan(second_hop=True))
    candidates = [
        Candidate(c.chunk_id, 2.0 - n / 10, {"fused": 2.0 - n / 10}) for n, c in enumerate(chunks)
    ]
    return state.updated(candidates=tuple(candidates))


def second_hop(graph: InMemoryGraphStore) -> SecondHop:
    """The stage over ``graph``, with no result cache."""
    return SecondHop(GraphLeads(graph, RememberedGenerations(InMemoryNamespaceGenerations())))


async def test_the_lookup_is_skipped_when_the_candidates_settle_the_links() -> None:
    graph = await written()
    after = await second_hop(graph).run(ranking(LEADS, TEA, PLAIN, DUO, NEWARK))
    assert [c.chunk_id for c in after.candidates] == [
        LEADS.chunk_id, DUO.chunk_id, NEWARK.chunk_id, TEA.chunk_id, PLAIN.chunk_id,
    ]  # fmt: skip
    assert graph.asked == []
    assert after.counts[NAMES_SEARCHED] == 0


async def test_the_lookup_is_made_when_fewer_candidates_than_links_are_about_the_names() -> None:
    graph = await written()
    after = await second_hop(graph).run(ranking(LEADS, TEA, PLAIN, DUO))
    assert [c.chunk_id for c in after.candidates] == [
        LEADS.chunk_id, DUO.chunk_id, REVILLE.chunk_id, TEA.chunk_id, PLAIN.chunk_id,
    ]  # fmt: skip
    assert set(graph.asked) >= {"alma reville", "ant dec"}


async def test_the_candidates_records_are_read_once_without_a_generation() -> None:
    graph = await written()
    hop = second_hop(graph)
    state = ranking(LEADS, TEA, PLAIN, DUO, NEWARK)
    first = await hop.run(state)
    again = await hop.run(state)
    assert first.candidates == again.candidates
    assert sorted(graph.read) == sorted(c.chunk_id for c in state.candidates)


async def lookup_alone(graph: InMemoryGraphStore, state: PipelineState) -> list[Candidate]:
    """The ranking when every source's names are looked up in the graph."""
    standing = {c.chunk_id: position for position, c in enumerate(state.candidates)}
    leading = list(standing)[:3]
    leaders = {document_of(chunk_id) for chunk_id in leading}
    records = await graph.get_many(leading, NS)
    links = {}
    for source, record in records.items():
        names = [name for name in record.mentions if not names_in(name_key(state.text), name)]
        about = await graph.about(names, namespace=NS)
        links[source] = linked(names, about, standing, leaders)[:2]
    return follow_links(state.candidates, links, StageName.SECOND_HOP)


@settings(max_examples=60, deadline=None)
@given(order=st.permutations(CORPUS), size=st.integers(1, len(CORPUS)))
def test_the_ranking_is_the_one_the_lookup_alone_gives(
    order: Sequence[RagChunk], size: int
) -> None:
    async def compare() -> None:
        graph = await written()
        state = ranking(*order[:size])
        after = await second_hop(graph).run(state)
        assert list(after.candidates) == await lookup_alone(graph, state)

    asyncio.run(compare())

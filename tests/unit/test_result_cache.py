"""InProcessResultCache over the in-memory generations: keys, expiry, eviction, when a
namespace settles, and that no result is served after a write that changed it completed,
whatever the interleaving."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from retrieval.domain.models import (
    RetrievalMatch,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
    SearchMode,
    StageTimings,
)
from retrieval.domain.stage_names import StageName
from retrieval.errors import BackendUnavailableError
from retrieval.ports.namespace_generations import NO_LSNS, Generation
from retrieval.service.caching.freshness import NamespaceFreshness, NoIndexLsns
from retrieval.service.caching.result_cache import InProcessResultCache
from retrieval_testkit import InMemoryNamespaceGenerations

NS = "tea"
COMPUTE_MS = 5_000.0
QUERY = RetrievalQuery(query="frost damage", domains=("weather_patterns",), top_k=5)


class ManualClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Computations:
    """A computation that answers with how many times it ran."""

    def __init__(self, degraded: tuple[str, ...] = ()) -> None:
        self.runs = 0
        self._degraded = degraded

    async def __call__(self) -> RetrievalResult:
        self.runs += 1
        return answer(NS, self.runs, degraded=self._degraded)


class GenerationsDown(InMemoryNamespaceGenerations):
    async def current(self, namespace: str) -> Generation:
        raise BackendUnavailableError("MongoDB unreachable during find")


def answer(namespace: str, version: int, degraded: tuple[str, ...] = ()) -> RetrievalResult:
    match = RetrievalMatch(
        chunk_id=f"doc#{version}",
        content=str(version),
        score=1.0,
        document_id="doc",
        title="Doc",
        domain="weather_patterns",
    )
    return RetrievalResult(
        matches=(match,),
        query="as computed",
        namespace=namespace,
        total_matches=1,
        degraded=degraded,
        timings=StageTimings(stages={"search": COMPUTE_MS}, total_ms=COMPUTE_MS),
    )


def version(result: RetrievalResult) -> int:
    return int(result.matches[0].content)


async def test_an_identical_request_is_served_from_the_cache() -> None:
    generations = InMemoryNamespaceGenerations()
    cache = InProcessResultCache(NamespaceFreshness(generations, NoIndexLsns(), 0))
    compute = Computations()
    first = await cache.through(QUERY, NS, compute)
    second = await cache.through(QUERY, NS, compute)
    assert compute.runs == 1
    assert not first.cached
    assert second.cached
    assert (
        second.model_copy(
            update={"cached": False, "query": "as computed", "timings": first.timings}
        )
        == first
    )
    assert generations.current_calls == 2


async def test_a_cached_result_reports_the_time_of_the_call_that_served_it() -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0)
    )
    computed = await cache.through(QUERY, NS, Computations())
    served = await cache.through(QUERY, NS, Computations())
    assert computed.timings.stages == {"search": COMPUTE_MS}
    assert served.timings.stages.keys() == {"cache"}
    assert served.timings.total_ms == served.timings.stages[StageName.CACHE] < COMPUTE_MS


@pytest.mark.parametrize(
    ("request_", "namespace"),
    [
        (QUERY.model_copy(update={"query": "frost damages"}), NS),
        (QUERY.model_copy(update={"domains": ("weather_patterns", "plant_diseases")}), NS),
        (QUERY.model_copy(update={"domains": ()}), NS),
        (QUERY.model_copy(update={"top_k": 6}), NS),
        (QUERY.model_copy(update={"confidence_threshold": 0.3}), NS),
        (QUERY.model_copy(update={"options": RetrievalOptions(mode=SearchMode.DENSE)}), NS),
        (QUERY.model_copy(update={"options": RetrievalOptions(fetch_k=50)}), NS),
        (QUERY, "coffee"),
    ],
    ids=["query", "more domains", "no domains", "top_k", "threshold", "mode", "fetch_k", "ns"],
)
async def test_a_request_differing_in_any_part_of_the_key_is_computed(
    request_: RetrievalQuery, namespace: str
) -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0)
    )
    compute = Computations()
    await cache.through(QUERY, NS, compute)
    other = await cache.through(request_, namespace, compute)
    assert compute.runs == 2
    assert not other.cached


async def test_requests_that_differ_only_in_form_share_an_entry() -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0)
    )
    compute = Computations()
    await cache.through(
        QUERY.model_copy(update={"domains": ("weather_patterns", "plant_diseases")}), NS, compute
    )
    same = QUERY.model_copy(
        update={
            "query": "  \uff46rost\tdamage\n",
            "domains": ("plant_diseases", "weather_patterns"),
        }
    )
    served = await cache.through(same, NS, compute)
    assert compute.runs == 1
    assert served.cached
    assert served.query == "  \uff46rost\tdamage\n"


async def test_an_entry_expires_after_the_ttl() -> None:
    clock = ManualClock()
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0),
        ttl_s=60.0,
        clock=clock,
    )
    compute = Computations()
    await cache.through(QUERY, NS, compute)
    clock.now = 59.9
    assert (await cache.through(QUERY, NS, compute)).cached
    clock.now = 60.0
    expired = await cache.through(QUERY, NS, compute)
    assert not expired.cached
    assert compute.runs == 2


async def test_the_least_recently_used_entry_is_evicted() -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0), max_entries=2
    )
    compute = Computations()
    first, second, third = (QUERY.model_copy(update={"top_k": k}) for k in (1, 2, 3))
    await cache.through(first, NS, compute)
    await cache.through(second, NS, compute)
    assert (await cache.through(first, NS, compute)).cached
    await cache.through(third, NS, compute)
    assert (await cache.through(first, NS, compute)).cached
    assert (await cache.through(third, NS, compute)).cached
    assert not (await cache.through(second, NS, compute)).cached
    assert compute.runs == 4


async def test_advancing_the_generation_retires_that_namespace_only() -> None:
    generations = InMemoryNamespaceGenerations()
    cache = InProcessResultCache(NamespaceFreshness(generations, NoIndexLsns(), 0))
    compute = Computations()
    await cache.through(QUERY, NS, compute)
    await cache.through(QUERY, "coffee", compute)
    await generations.advance(NS)
    fresh = await cache.through(QUERY, NS, compute)
    assert not fresh.cached
    assert version(fresh) == 3
    assert (await cache.through(QUERY, "coffee", compute)).cached
    assert (await cache.through(QUERY, NS, compute)).cached


async def test_a_degraded_result_is_not_kept() -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0)
    )
    compute = Computations(degraded=("keyword",))
    await cache.through(QUERY, NS, compute)
    again = await cache.through(QUERY, NS, compute)
    assert not again.cached
    assert compute.runs == 2


async def test_a_failed_computation_is_not_kept() -> None:
    cache = InProcessResultCache(
        NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0)
    )

    async def fails() -> RetrievalResult:
        raise BackendUnavailableError("index unreachable")

    with pytest.raises(BackendUnavailableError):
        await cache.through(QUERY, NS, fails)
    compute = Computations()
    assert not (await cache.through(QUERY, NS, compute)).cached
    assert compute.runs == 1


async def test_without_a_generation_every_call_computes_and_warns() -> None:
    cache = InProcessResultCache(NamespaceFreshness(GenerationsDown(), NoIndexLsns(), 0))
    compute = Computations()
    with capture_logs() as logs:
        results = [await cache.through(QUERY, NS, compute) for _ in range(2)]
    assert [version(result) for result in results] == [1, 2]
    assert not any(result.cached for result in results)
    assert [entry["event"] for entry in logs] == ["result_cache.generation_unavailable"] * 2


@pytest.mark.parametrize(
    ("max_entries", "ttl_s", "named"), [(0, 60.0, "max_entries"), (10, 0.0, "ttl_s")]
)
def test_an_empty_or_instant_cache_is_refused(max_entries: int, ttl_s: float, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        InProcessResultCache(
            NamespaceFreshness(InMemoryNamespaceGenerations(), NoIndexLsns(), 0),
            max_entries=max_entries,
            ttl_s=ttl_s,
        )


class Interleaving:
    """Runs tasks one step at a time in an order the test chooses: a task parks at each
    ``switch`` until it is picked, and the others wait meanwhile."""

    def __init__(self) -> None:
        self._parked: dict[asyncio.Task, asyncio.Future[None]] = {}
        self._moved = asyncio.Event()

    async def switch(self) -> None:
        parked = asyncio.get_running_loop().create_future()
        self._parked[asyncio.current_task()] = parked
        self._moved.set()
        await parked

    async def run(self, steps: list[Coroutine], pick: Callable[[int], int]) -> None:
        tasks = [asyncio.ensure_future(step) for step in steps]
        for task in tasks:
            task.add_done_callback(lambda _: self._moved.set())
        while True:
            while not all(task.done() or task in self._parked for task in tasks):
                self._moved.clear()
                await self._moved.wait()
            waiting = [task for task in tasks if task in self._parked]
            if not waiting:
                break
            self._parked.pop(waiting[pick(len(waiting))]).set_result(None)
        for task in tasks:
            task.result()


class InterleavedGenerations(InMemoryNamespaceGenerations):
    """Generations whose calls other tasks may overtake, as round trips would."""

    def __init__(self, interleaving: Interleaving) -> None:
        super().__init__()
        self._interleaving = interleaving

    async def current(self, namespace: str) -> Generation:
        await self._interleaving.switch()
        return await super().current(namespace)

    async def advance(self, namespace: str, index_lsns: Mapping[str, int] = NO_LSNS) -> int:
        await self._interleaving.switch()
        return await super().advance(namespace, index_lsns)


@dataclass(frozen=True)
class Read:
    namespace: str


@dataclass(frozen=True)
class Write:
    namespace: str


namespaces = st.sampled_from([NS, "coffee"])
histories = st.lists(
    st.one_of(st.builds(Read, namespaces), st.builds(Write, namespaces)), min_size=1, max_size=10
)


@settings(max_examples=500, deadline=None)
@given(histories, st.data())
async def test_no_result_is_served_after_a_write_that_changed_it_completed(
    operations: list[Read | Write], data: st.DataObject
) -> None:
    """Writes change their namespace's data, then advance its generation; a computation reads
    the data at one instant. Every interleaving of their steps is reachable: a read that
    starts after a write completed is served data at least as new, cached or not."""
    interleaving = Interleaving()
    generations = InterleavedGenerations(interleaving)
    cache = InProcessResultCache(NamespaceFreshness(generations, NoIndexLsns(), 0))
    stores: Counter[str] = Counter()
    tick = itertools.count()
    completed: list[tuple[int, str, int]] = []
    served: list[tuple[int, str, int]] = []

    async def write(namespace: str) -> None:
        await interleaving.switch()
        stores[namespace] += 1
        written = stores[namespace]
        await generations.advance(namespace)
        completed.append((next(tick), namespace, written))

    async def read(namespace: str) -> None:
        await interleaving.switch()
        started = next(tick)

        async def compute() -> RetrievalResult:
            await interleaving.switch()
            seen = stores[namespace]
            await interleaving.switch()
            return answer(namespace, seen)

        result = await cache.through(QUERY, namespace, compute)
        served.append((started, namespace, version(result)))

    await interleaving.run(
        [write(op.namespace) if isinstance(op, Write) else read(op.namespace) for op in operations],
        lambda waiting: data.draw(st.integers(0, waiting - 1)),
    )
    for started, namespace, seen in served:
        newest_completed = max(
            (written for done, ns, written in completed if ns == namespace and done < started),
            default=0,
        )
        assert seen >= newest_completed


async def test_advancing_before_the_stores_change_would_serve_a_stale_result() -> None:
    """Why writers advance after their changes: in the other order, a read between the two
    stores the old data under the new generation, and it is served after the write."""
    generations = InMemoryNamespaceGenerations()
    cache = InProcessResultCache(NamespaceFreshness(generations, NoIndexLsns(), 0))
    data = {NS: 1}

    async def compute() -> RetrievalResult:
        return answer(NS, data[NS])

    await generations.advance(NS)
    await cache.through(QUERY, NS, compute)
    data[NS] = 2
    after_the_write = await cache.through(QUERY, NS, compute)
    assert after_the_write.cached
    assert version(after_the_write) == 1


@pytest.mark.parametrize("settle_s", [0.0, 1.0])
async def test_a_namespace_settles_once_its_newest_generation_was_seen_long_enough(
    settle_s: float,
) -> None:
    now = [100.0]
    generations = InMemoryNamespaceGenerations()
    freshness = NamespaceFreshness(generations, NoIndexLsns(), settle_s, clock=lambda: now[0])
    assert freshness.settled(NS) is (settle_s == 0)
    await freshness.current(NS)
    now[0] += settle_s
    assert freshness.settled(NS)
    await generations.advance(NS)
    await freshness.current(NS)
    assert freshness.settled(NS) is (settle_s == 0)
    now[0] += settle_s
    assert freshness.settled(NS)

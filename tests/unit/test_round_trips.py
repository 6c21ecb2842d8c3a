"""Store round trips counted per stage of a call, and carried with its timings."""

from __future__ import annotations

import asyncio

from retrieval.domain.models import RetrievalResult, StageTimings
from retrieval.grpc.retrieval_conversions import result_from_proto, result_to_proto
from retrieval.observability.round_trips import store_round_trip
from retrieval.service.timing import StageClock


async def request() -> None:
    await asyncio.sleep(0)
    store_round_trip()


async def test_each_round_trip_counts_for_the_stage_under_way_and_its_tasks() -> None:
    clock = StageClock()
    store_round_trip()
    with clock.stage("search"):
        await asyncio.gather(request(), request())
    with clock.stage("fetch"):
        store_round_trip()
    with clock.stage("diversify"):
        pass
    assert clock.round_trips == {"search": 2, "fetch": 1}


async def test_a_clock_sharing_the_call_s_round_trips_adds_to_them() -> None:
    trips: dict[str, int] = {}
    with StageClock(trips).stage("cache"):
        store_round_trip()
    with StageClock(trips).stage("fetch"):
        store_round_trip()
    assert trips == {"cache": 1, "fetch": 1}


def test_a_stage_that_raises_keeps_its_time_and_round_trips_and_the_outer_stage_counts_again() -> (
    None
):
    clock = StageClock()
    with clock.stage("second_hop"):
        try:
            with clock.stage("search"):
                store_round_trip()
                raise ValueError("the store failed")
        except ValueError:
            pass
        store_round_trip()
    store_round_trip()
    assert clock.round_trips == {"search": 1, "second_hop": 1}
    assert clock.stages.keys() == {"search", "second_hop"}
    assert clock.stages["second_hop"] >= clock.stages["search"] >= 0


def test_round_trips_cross_the_wire_with_the_timings() -> None:
    result = RetrievalResult(
        matches=(),
        query="q",
        namespace="ns",
        total_matches=0,
        timings=StageTimings(
            stages={"search": 1.5, "fetch": 0.5},
            total_ms=2.5,
            round_trips={"cache": 1, "fetch": 1},
        ),
    )
    assert result_from_proto(result_to_proto(result)).timings == result.timings

"""Reads that went back and writes that were lost, in what callers of several replicas saw.

Changes and reads are timed as ``retrieval_testkit.replica_history`` times them. A version of
a document is *certainly older* than another when every change that wrote it ended before
any change that wrote the other started; changes that overlap may land in either order.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from retrieval_testkit.replica_history import ABSENT, Change, Read


@dataclass(frozen=True)
class Span:
    """From the start of the first change that wrote a version to the end of the last."""

    started: float
    ended: float


def spans(history: Sequence[Change]) -> dict[str | None, Span]:
    """Each version's span; a deletion's is under ``ABSENT``, where the document before its
    first change also is."""
    found: dict[str | None, Span] = {ABSENT: Span(float("-inf"), float("-inf"))}
    for change in history:
        known = found.get(change.version, Span(change.started, change.ended))
        found[change.version] = Span(
            min(known.started, change.started), max(known.ended, change.ended)
        )
    return found


def non_monotonic_reads(
    reads: Sequence[Read], changes: Mapping[str, Sequence[Change]]
) -> list[Read]:
    """The reads that show a version of a document certainly older than one their replica
    showed in a read that ended before they started. What a read does not show says nothing
    (an index that lags may miss a document); a version nobody wrote is a stale read's
    matter."""
    span_of = {document_id: spans(history) for document_id, history in changes.items()}
    went_back: list[Read] = []
    by_replica: dict[int, list[Read]] = defaultdict(list)
    for read in reads:
        by_replica[read.replica].append(read)
    for replica_reads in by_replica.values():
        ended: list[tuple[float, int]] = []
        newest_start: dict[str, float] = defaultdict(lambda: float("-inf"))
        ordered = sorted(replica_reads, key=lambda read: read.started)
        for n, read in enumerate(ordered):
            while ended and ended[0][0] <= read.started:
                for document_id, versions in ordered[heapq.heappop(ended)[1]].shown.items():
                    known = span_of.get(document_id, {})
                    for version in versions & known.keys():
                        newest = max(newest_start[document_id], known[version].started)
                        newest_start[document_id] = newest
            if any(
                span_of[document_id][version].ended < newest_start[document_id]
                for document_id, versions in read.shown.items()
                if document_id in span_of
                for version in versions & span_of[document_id].keys()
            ):
                went_back.append(read)
            heapq.heappush(ended, (read.ended, n))
    return went_back


def lost_acknowledged_writes(
    final_reads: Sequence[Read], changes: Mapping[str, Sequence[Change]]
) -> list[Change]:
    """The acknowledged changes that a read made after every change (and its repair) does
    not show: what it shows of the document is certainly older than the change, and no
    acknowledged change certainly followed it (that one is counted instead)."""
    lost: list[Change] = []
    for document_id, history in changes.items():
        span_of = spans(history)
        last = [
            change
            for change in history
            if change.acknowledged
            and not any(later.acknowledged and later.started > change.ended for later in history)
        ]
        for change in last:
            if change not in lost and any(
                all(
                    version in span_of and span_of[version].ended < change.started
                    for version in read.shown.get(document_id) or {ABSENT}
                )
                for read in final_reads
            ):
                lost.append(change)
    return lost


@dataclass(frozen=True)
class LagWindow:
    """A time the index lagged more than usual: reads then are held to ``bound_s``."""

    started: float
    ended: float
    bound_s: float


def bound_at(started: float, usual_s: float, windows: Sequence[LagWindow]) -> float:
    """The freshness bound of a read started at ``started``: ``usual_s``, or a window's
    bound from the window's start until the writes made within it have been shown."""
    raised = [w.bound_s for w in windows if w.started <= started <= w.ended + w.bound_s]
    return max([usual_s, *raised])

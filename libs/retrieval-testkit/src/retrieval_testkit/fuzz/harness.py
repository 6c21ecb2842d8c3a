"""Runs hypothesis against one public input at a time and counts what goes wrong.

A target is a strategy of inputs, the errors the input may legitimately raise (the typed
errors it documents, or Pydantic's ``ValidationError`` where a model is built at the
boundary), and a session: what the cases need set up (an application, a server), yielding
the check one case runs. Every case runs to its end: a failure is recorded and the next
case follows, so a run reports how many cases failed. A failure is an exception the target
does not allow (a crash, a broken invariant, an untyped error) or a case still running after
the per-case time limit (a hang).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Coroutine, Iterator
from contextlib import AbstractAsyncContextManager, AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import structlog
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as seeded
from hypothesis.strategies import SearchStrategy
from pydantic import ValidationError

from retrieval.logging import configure_logging

T = TypeVar("T")
Check = Callable[[Any], None]
EXAMPLE_CHARS = 2000


class HangError(Exception):
    """A case ran past the per-case time limit."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"still running after {seconds:g} s")


class RefusedError(Exception):
    """The input was refused at the boundary: a model did not validate it."""


def boundary(build: Callable[[], T]) -> T:
    """``build()``, its ``ValidationError`` turned into ``RefusedError``: a model refusing raw
    fields is the boundary doing its work."""
    try:
        return build()
    except ValidationError as error:
        raise RefusedError(str(error)) from error


class Runner:
    """What every session shares: one event loop, and the per-case time limit."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.loop = asyncio.new_event_loop()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run a coroutine on the loop; ``HangError`` when it has not finished in time (and,
        should it block the loop, an alarm at twice the limit stops it)."""
        with alarm(2 * self.timeout_s):
            return self.loop.run_until_complete(bounded(coroutine, self.timeout_s))

    def call(self, function: Callable[..., T], *arguments: Any, **keywords: Any) -> T:
        """Call a function; ``HangError`` when it has not returned in time."""
        with alarm(self.timeout_s):
            return function(*arguments, **keywords)

    @contextmanager
    def entered(self, manager: AbstractAsyncContextManager[T]) -> Iterator[T]:
        """``async with manager`` on the loop, for a whole session (no time limit)."""
        value = self.loop.run_until_complete(manager.__aenter__())
        try:
            yield value
        finally:
            self.loop.run_until_complete(manager.__aexit__(*sys.exc_info()))

    def close(self) -> None:
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()


async def bounded(coroutine: Coroutine[Any, Any, T], seconds: float) -> T:
    try:
        async with asyncio.timeout(seconds) as scope:
            return await coroutine
    except TimeoutError:
        if scope.expired():
            raise HangError(seconds) from None
        raise


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Raise ``HangError`` in the main thread after ``seconds``; an alarm set before (a test
    runner's time limit) is put back with the time it had left."""

    def ring(signum: int, frame: object) -> None:
        raise HangError(seconds)

    handler = signal.signal(signal.SIGALRM, ring)
    begun = time.monotonic()
    left, interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, handler)
        if left:
            remaining = max(left - (time.monotonic() - begun), 0.001)
            signal.setitimer(signal.ITIMER_REAL, remaining, interval)


Session = Callable[[Runner], AbstractContextManager[Check]]


@dataclass(frozen=True)
class Target:
    """One public input: ``session(runner)`` yields the check of one case, which may raise
    ``allowed`` errors or ``RefusedError`` and nothing else; both count the case as refused."""

    name: str
    strategy: SearchStrategy[Any]
    allowed: tuple[type[BaseException], ...]
    session: Session


@dataclass(frozen=True)
class Failure:
    example: str
    error: str

    def as_dict(self) -> dict[str, str]:
        return {"example": self.example, "error": self.error}


@dataclass
class TargetReport:
    name: str
    cases: int = 0
    refused: int = 0
    failures: int = 0
    seconds: float = 0.0
    first: Failure | None = None

    def fail(self, example: Any, error: BaseException) -> None:
        self.failures += 1
        if self.first is None:
            self.first = Failure(shorten(repr(example)), describe(error))

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "refused": self.refused,
            "failures": self.failures,
            "seconds": round(self.seconds, 2),
            "first_failure": self.first.as_dict() if self.first else None,
        }


@dataclass
class FuzzReport:
    cases_per_target: int
    seed: int
    timeout_s: float
    targets: list[TargetReport] = field(default_factory=list)

    @property
    def failed(self) -> list[TargetReport]:
        return [target for target in self.targets if target.failures]

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases_per_target": self.cases_per_target,
            "seed": self.seed,
            "timeout_s": self.timeout_s,
            "targets": {target.name: target.as_dict() for target in self.targets},
        }


def shorten(text: str) -> str:
    return text if len(text) <= EXAMPLE_CHARS else f"{text[:EXAMPLE_CHARS]}... ({len(text)} chars)"


def describe(error: BaseException) -> str:
    """The error and where it was raised: its type, message and innermost frames."""
    frames = traceback.extract_tb(error.__traceback__)[-3:]
    where = "".join(traceback.format_list(frames))
    return shorten(f"{type(error).__name__}: {error}\n{where}".rstrip())


def run_target(target: Target, runner: Runner, *, cases: int, seed: int) -> TargetReport:
    """Up to ``cases`` inputs from the target's strategy (fewer only if it has no more)."""
    report = TargetReport(target.name)
    begun = time.perf_counter()
    with target.session(runner) as check:

        @seeded(seed)
        @settings(
            max_examples=cases,
            deadline=None,
            database=None,
            phases=(Phase.generate,),
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
        )
        @given(target.strategy)
        def case(example: Any) -> None:
            report.cases += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # parsers warn of what they repair
                    check(example)
            except (RefusedError, *target.allowed):
                report.refused += 1
            except Exception as error:
                report.fail(example, error)

        case()
    report.seconds = time.perf_counter() - begun
    return report


def run_targets(
    targets: list[Target],
    *,
    cases: int,
    seed: int = 0,
    timeout_s: float = 30.0,
    on_target: Callable[[TargetReport], None] | None = None,
) -> FuzzReport:
    """Each target in turn, on one runner."""
    report = FuzzReport(cases_per_target=cases, seed=seed, timeout_s=timeout_s)
    runner = Runner(timeout_s)
    try:
        for target in targets:
            with quiet():
                report.targets.append(run_target(target, runner, cases=cases, seed=seed))
            if on_target is not None:
                on_target(report.targets[-1])
    finally:
        runner.close()
    return report


@contextmanager
def quiet() -> Iterator[None]:
    """No logs: every refused input is logged, and parsers warn of every broken file."""
    saved = structlog.get_config()
    configure_logging("CRITICAL")
    logging.disable(logging.CRITICAL)
    try:
        yield
    finally:
        logging.disable(logging.NOTSET)
        structlog.configure(**saved)

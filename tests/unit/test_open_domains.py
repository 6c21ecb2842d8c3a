"""Any well-formed domain is accepted unless ``RETRIEVAL_ALLOWED_DOMAINS`` lists the only ones,
through the services the container wires over the in-memory stores."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from pydantic import ValidationError

from retrieval.demo import demo_settings
from retrieval.domain.models import DEFAULT_DOMAINS, RagDocument
from retrieval.domain.validation import ValidationCase, ValidationRequest
from retrieval.errors import InvalidRequestError
from retrieval.evaluation.golden_suite import GoldenSample, GoldenSuite, check_suite
from retrieval.lifecycle import Application, running
from retrieval.settings import Settings
from retrieval_bench.beir.run import CORPUS_DOMAIN, corpus_domain
from retrieval_testkit.container import in_memory_container

NS = "handbook"
KEYS = RagDocument(
    document_id="rotating-keys",
    title="Rotating API keys",
    domain="software_docs",
    content="Create a new API key, deploy it to every service, then revoke the old key.",
)
FROST = RagDocument(
    document_id="frost",
    title="Frost",
    domain="weather_patterns",
    content="Ground frost on clear winter nights scorches the plucking table.",
)

Started = Callable[..., AbstractAsyncContextManager[Application]]


@pytest.fixture
def started(tmp_path: Path) -> Started:
    @asynccontextmanager
    async def start(**settings: object) -> AsyncIterator[Application]:
        configured = Settings(_env_file=None, data_dir=tmp_path, **settings)
        async with running(configured, in_memory_container(configured)) as app:
            yield app

    return start


def test_by_default_no_domain_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RETRIEVAL_ALLOWED_DOMAINS", raising=False)
    assert Settings(_env_file=None).allowed_domains == ()


def test_an_allow_list_of_a_malformed_domain_is_a_validation_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RETRIEVAL_ALLOWED_DOMAINS", '["software docs"]')
    with pytest.raises(ValidationError, match="allowed_domains"):
        Settings(_env_file=None)


async def test_a_new_domain_is_ingested_and_searched_with_no_configuration(
    started: Started,
) -> None:
    async with started() as app:
        await app.ingestion.ingest([KEYS, FROST], NS)
        filtered = await app.retrieval.retrieve("rotate the API key", ["software_docs"], 5, 0, NS)
        everywhere = await app.retrieval.retrieve("rotate the API key", [], 5, 0, NS)
    assert {match.domain for match in filtered.matches} == {"software_docs"}
    assert {match.domain for match in everywhere.matches} == {"software_docs", "weather_patterns"}


async def test_a_set_allow_list_refuses_other_domains_naming_the_setting(started: Started) -> None:
    async with started(allowed_domains=DEFAULT_DOMAINS) as app:
        with pytest.raises(InvalidRequestError) as ingested:
            await app.ingestion.ingest([KEYS], NS)
        await app.ingestion.ingest([FROST], NS)
        with pytest.raises(InvalidRequestError) as retrieved:
            await app.retrieval.retrieve("keys", ["software_docs"], 5, 0, NS)
        case = ValidationCase(query="keys", domains=("software_docs",))
        with pytest.raises(InvalidRequestError) as validated:
            await app.validation.validate(ValidationRequest(namespace=NS, cases=(case,)))
    allowed = ", ".join(sorted(DEFAULT_DOMAINS))
    assert ingested.value.field == "domain"
    assert str(ingested.value) == (
        "domain: document 'rotating-keys': domain software_docs is not in "
        f"RETRIEVAL_ALLOWED_DOMAINS ({allowed})"
    )
    assert (retrieved.value.field, validated.value.field) == ("domains", "cases.0.domains")
    assert (
        retrieved.value.reason
        == validated.value.reason
        == (f"domain software_docs is not in RETRIEVAL_ALLOWED_DOMAINS ({allowed})")
    )


def golden_suite(domain: str) -> GoldenSuite:
    document = KEYS.model_copy(update={"domain": domain})
    sample = GoldenSample(
        id="keys", query="rotate keys", relevant={KEYS.document_id: 2}, domains=(domain,), kind="x"
    )
    return GoldenSuite(name="suite", documents=(document,), samples=(sample,))


def test_a_golden_suite_names_any_domain_unless_an_allow_list_is_set() -> None:
    check_suite(golden_suite("software_docs"), ())
    with pytest.raises(InvalidRequestError) as raised:
        check_suite(golden_suite("software_docs"), ["plant_diseases"])
    assert raised.value.reason == (
        "document rotating-keys: domain software_docs is not in RETRIEVAL_ALLOWED_DOMAINS "
        "(plant_diseases); sample keys: domain software_docs is not in "
        "RETRIEVAL_ALLOWED_DOMAINS (plant_diseases)"
    )


def test_the_demo_adds_its_domains_to_a_set_allow_list_only() -> None:
    open_settings = Settings(_env_file=None)
    assert demo_settings(open_settings) is open_settings
    listed = demo_settings(Settings(_env_file=None, allowed_domains=["software_docs"]))
    assert listed.allowed_domains == ("software_docs", *DEFAULT_DOMAINS)


def test_a_benchmark_corpus_takes_a_domain_the_settings_allow() -> None:
    assert corpus_domain(()) == CORPUS_DOMAIN
    assert corpus_domain(("software_docs", "plant_diseases")) == "software_docs"

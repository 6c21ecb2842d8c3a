"""Documents to ingest: ``RagDocument`` built from raw fields (its ``ValidationError`` is the
boundary), then ``IngestionService.check`` and ``ingest``. Both refuse with
``InvalidRequestError`` only, and agree: ``ingest`` takes exactly the requests whose
documents ``check`` passes (with distinct ids), writes each of them (no ``FAILED`` outcome
on stores that do not fail), and ``delete_document`` then removes as many chunks as were
written."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import strategies as st

from retrieval.domain.models import RagDocument
from retrieval.errors import InvalidRequestError
from retrieval.service.ingestion.outcomes import Outcome
from retrieval_testkit.fuzz.apps import seeded_application
from retrieval_testkit.fuzz.harness import Check, RefusedError, Runner, Target, boundary
from retrieval_testkit.fuzz.strategies import (
    domains,
    long_texts,
    markdown,
    metadata,
    mostly,
    scalars,
    slugs,
    texts,
    words,
)

NAMESPACES = ("fuzz-documents", "fuzz-documents-2")


def raw_documents() -> st.SearchStrategy[Any]:
    """Fields of a document: valid mostly, hostile now and then, an unknown field rarely."""
    fields = st.fixed_dictionaries(
        {
            "document_id": slugs(),
            "title": mostly(words(6, min_size=1), texts(100)),
            "domain": mostly(st.sampled_from(["plant_diseases", "tea_cultivation"]), domains()),
            "content": mostly(
                st.one_of(words(60, min_size=1), markdown(300), long_texts(words(30, min_size=1))),
                texts(500),
                odds=4,
            ),
        },
        optional={
            "metadata": mostly(
                st.dictionaries(st.sampled_from(["region", "year"]), words(3)), metadata(), odds=2
            )
        },
    )
    unknown_field = fields.map(lambda raw: {**raw, "source": "web"})
    return mostly(fields, st.one_of(unknown_field, scalars()), odds=30)


def requests() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "documents": st.lists(raw_documents(), min_size=1, max_size=3),
            "namespace": mostly(st.sampled_from(NAMESPACES), st.one_of(st.none(), slugs())),
        }
    )


@contextmanager
def session(runner: Runner) -> Iterator[Check]:
    with runner.entered(seeded_application()) as app:
        ingestion = app.ingestion

        def check(case: dict[str, Any]) -> None:
            documents = boundary(
                lambda: [RagDocument.model_validate(raw) for raw in case["documents"]]
            )
            namespace = case["namespace"]
            refusals = []
            for document in documents:
                try:
                    runner.call(ingestion.check, document, namespace)
                except InvalidRequestError as error:
                    refusals.append(error)
            ids = [document.document_id for document in documents]
            if len(set(ids)) < len(ids):
                refusals.append(InvalidRequestError("appears twice", field="document_id"))
            try:
                outcomes = runner.run(ingestion.ingest(documents, namespace))
            except InvalidRequestError as error:
                if not refusals:
                    raise AssertionError(f"ingest refused what check passed: {error}") from error
                raise RefusedError(str(error)) from error
            assert not refusals, f"ingest took what check refused: {refusals[0]}"
            assert [outcome.document_id for outcome in outcomes] == ids, outcomes
            for outcome in outcomes:
                assert outcome.outcome is not Outcome.FAILED, outcome
                assert outcome.chunks >= 1, outcome
                deleted = runner.run(app.library.delete_document(outcome.document_id, namespace))
                assert deleted == outcome.chunks, (outcome, deleted)

        yield check


TARGET = Target(name="documents", strategy=requests(), allowed=(), session=session)

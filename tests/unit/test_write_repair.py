"""Which write calls ``WriteRepair`` notes, and how long a namespace stays noted."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from retrieval.errors import BackendUnavailableError, InvalidRequestError
from retrieval.grpc.write_repair import WriteRepair
from retrieval.service.ingestion.reconciliation import ReconcileReport
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

DEFAULT = "default"


@dataclass
class ScriptedIngestion:
    """Reconciles by playing ``answers`` in turn: a report's busy documents, or an error."""

    answers: list[tuple[str, ...] | Exception] = field(default_factory=list)
    reconciled: list[str] = field(default_factory=list)
    recoveries: int = 0

    async def reconcile(self, namespace: str) -> ReconcileReport:
        self.reconciled.append(namespace)
        answer = self.answers.pop(0) if self.answers else ()
        if isinstance(answer, Exception):
            raise answer
        return report(namespace, busy=answer)

    async def recover(self) -> int:
        self.recoveries += 1
        return 0


def report(namespace: str, busy: tuple[str, ...]) -> ReconcileReport:
    found = dict.fromkeys(
        (
            "documents",
            "vectors_without_texts",
            "texts_without_vectors",
            "stale_chunks",
            "pending_documents",
            "documents_to_repair",
        ),
        0,
    )
    return ReconcileReport(namespace=namespace, dry_run=False, busy_documents=busy, **found)


@dataclass
class Context:
    status: grpc.StatusCode | None = None

    def code(self) -> grpc.StatusCode | None:
        return self.status


@dataclass(frozen=True)
class Details:
    method: str


async def call(
    repair: WriteRepair,
    method: str,
    request: Any,
    answer: Callable[[Context], Any],
    status: grpc.StatusCode | None = None,
) -> None:
    """``method`` through the interceptor: ``answer`` returns its response or raises, having
    set ``status`` on the context as an abort does."""

    async def behaviour(request: Any, context: Context) -> Any:
        return answer(context)

    wrapped = repair.wrap(behaviour, Details(f"/retrieval.v1.RetrievalService/{method}"))
    with suppress(RuntimeError):
        await wrapped(request, Context(status))


def fails(context: Context) -> Any:
    raise RuntimeError("the call ended with its status")


def failed_outcome(context: Context) -> pb.IngestDocumentsResponse:
    return pb.IngestDocumentsResponse(
        outcomes=[pb.DocumentOutcome(document_id="d", outcome=pb.OUTCOME_FAILED)]
    )


def created_outcome(context: Context) -> pb.IngestDocumentsResponse:
    return pb.IngestDocumentsResponse(
        outcomes=[pb.DocumentOutcome(document_id="d", outcome=pb.OUTCOME_CREATED)]
    )


async def test_only_writes_that_may_have_left_something_are_repaired_once() -> None:
    ingestion = ScriptedIngestion()
    repair = WriteRepair(ingestion, DEFAULT)  # type: ignore[arg-type]
    unavailable = grpc.StatusCode.UNAVAILABLE
    await call(
        repair, "IngestDocuments", pb.IngestDocumentsRequest(namespace="a"), fails, unavailable
    )
    await call(repair, "IngestDocuments", pb.IngestDocumentsRequest(), failed_outcome)
    await call(repair, "DeleteDocument", pb.DeleteDocumentRequest(namespace="cut"), fails)
    await call(repair, "IngestDocuments", pb.IngestDocumentsRequest(namespace="b"), created_outcome)
    await call(
        repair,
        "DeleteDocument",
        pb.DeleteDocumentRequest(namespace="c"),
        fails,
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    await call(repair, "Retrieve", pb.RetrieveRequest(namespace="d"), fails, unavailable)

    await repair.repair()
    await repair.repair()

    assert ingestion.reconciled == ["a", DEFAULT, "cut"]


@pytest.mark.parametrize(
    ("answers", "reconciled"),
    [
        pytest.param([("busy-document",)], ["a", "a"], id="busy-document"),
        pytest.param([BackendUnavailableError("down again")], ["a", "a"], id="store-down"),
        pytest.param([InvalidRequestError("no such name")], ["a"], id="no-such-name"),
    ],
)
async def test_a_namespace_stays_noted_until_a_reconcile_goes_through_it(
    answers: list[tuple[str, ...] | Exception], reconciled: list[str]
) -> None:
    ingestion = ScriptedIngestion(answers=answers)
    repair = WriteRepair(ingestion, DEFAULT)  # type: ignore[arg-type]
    await call(repair, "DeleteNamespace", pb.DeleteNamespaceRequest(namespace="a"), fails)

    for _ in range(3):
        await repair.repair()

    assert ingestion.reconciled == reconciled


async def test_a_store_down_again_stops_the_round() -> None:
    ingestion = ScriptedIngestion(answers=[BackendUnavailableError("down again")])
    repair = WriteRepair(ingestion, DEFAULT)  # type: ignore[arg-type]
    for namespace in ("a", "b"):
        await call(repair, "DeleteNamespace", pb.DeleteNamespaceRequest(namespace=namespace), fails)

    await repair.repair()
    assert ingestion.reconciled == ["a"]
    assert ingestion.recoveries == 0
    await repair.repair()
    assert ingestion.reconciled == ["a", "a", "b"]
    assert ingestion.recoveries == 1

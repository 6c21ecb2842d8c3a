"""Writes a store's failure cut short, repaired once the stores answer again.

A write that fails because a store does not answer can seldom undo what it began: the undo
needs that store too. Its document is left PENDING, its texts stored without vectors (no
search finds them), until the next write of it or ``retrieval reconcile`` (see
``retrieval.service.ingestion.group_write``). ``WriteRepair`` notes the namespace of
every write call that failed or was cut short, and ``repair``, which the health monitor calls
while the stores answer, reconciles those namespaces (``Repair.reconcile``). A
namespace stays noted until a reconcile has gone through it with no document busy.

Each ``repair`` also recovers what writers that ended left (``Repair.recover``): a replica
killed mid-write, and never restarted, leaves documents PENDING under its lease; once the lease
expires, the next probe of any live replica repairs them, within the lease time
(``RETRIEVAL_INGEST_LEASE_S``) and a health interval (``RETRIEVAL_HEALTH_INTERVAL_S``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import grpc
import structlog

from retrieval.errors import InvalidRequestError, RetrievalError
from retrieval.grpc.interceptors import Behaviour, CallInterceptor, service_and_method
from retrieval.service.ingestion.repair import Repair
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

log = structlog.get_logger("grpc")

WRITES = frozenset(
    {
        "IngestDocuments",
        "DeleteDocument",
        "DeleteNamespace",
        "SyncDocuments",
        "DeleteDocuments",
    }
)
REFUSED_BEFORE_WRITING = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.ABORTED,
})  # fmt: skip
"""Statuses of write calls that end before anything is written."""


def failed_documents(response: Any) -> bool:
    writes = (pb.IngestDocumentsResponse, pb.SyncDocumentsResponse)
    return isinstance(response, writes) and any(
        outcome.outcome == pb.OUTCOME_FAILED for outcome in response.outcomes
    )


class WriteRepair(CallInterceptor):
    def __init__(self, repair: Repair, default_namespace: str) -> None:
        self._repair = repair
        self._default_namespace = default_namespace
        self._noted: Counter[str] = Counter()

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        if service_and_method(details.method)[1] not in WRITES:
            return behaviour

        async def noted(request: Any, context: grpc.aio.ServicerContext) -> Any:
            namespace = request.namespace or self._default_namespace
            try:
                response = await behaviour(request, context)
            except BaseException:
                if context.code() not in REFUSED_BEFORE_WRITING:
                    self._noted[namespace] += 1
                raise
            if failed_documents(response):
                self._noted[namespace] += 1
            return response

        return noted

    async def repair(self) -> None:
        """Reconcile every noted namespace, then recover what ended writers left; stop at the
        first failure (a store is down again: the next call tries again). A name no namespace
        can have is dropped."""
        if not await self._reconciled():
            return
        try:
            recovered = await self._repair.recover()
        except RetrievalError as error:
            log.warning("grpc.recover_failed", error=str(error))
            return
        if recovered:
            log.info("grpc.left_writes_recovered", documents=recovered)

    async def _reconciled(self) -> bool:
        """Reconcile every noted namespace; False at the first that fails."""
        for namespace, failures in list(self._noted.items()):
            try:
                report = await self._repair.reconcile(namespace)
            except InvalidRequestError:
                del self._noted[namespace]
                continue
            except RetrievalError as error:
                log.warning("grpc.write_repair_failed", namespace=namespace, error=str(error))
                return False
            log.info(
                "grpc.writes_repaired",
                namespace=namespace,
                repaired=report.repaired_documents,
                busy=len(report.busy_documents),
                incomplete=len(report.incomplete_documents),
            )
            if not report.busy_documents and self._noted[namespace] == failures:
                del self._noted[namespace]
        return True

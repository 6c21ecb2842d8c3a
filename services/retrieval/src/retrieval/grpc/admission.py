"""A bound on the calls the server answers at once.

Past ``limit`` calls in flight, a call is refused at once with RESOURCE_EXHAUSTED and the
trailing metadata ``x-retry-after-s`` (``RetrievalClient`` raises ``RateLimitedError``, and
retries after that pause when its deadline allows), instead of joining a queue that grows
without bound while every caller's latency grows with it. Refusals are counted in
``retrieval_rpc_refused_total``. Calls to the ``exempt`` services (health checks) are neither
counted nor refused, so probes still answer while the server is saturated.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import grpc
import structlog

from retrieval.grpc.interceptors import Behaviour, CallInterceptor, service_and_method
from retrieval.grpc.metadata import RETRY_AFTER_KEY
from retrieval.observability.metrics import ServiceMetrics

log = structlog.get_logger("grpc")

RETRY_AFTER_S = 1.0


class InFlightLimitInterceptor(CallInterceptor):
    def __init__(self, limit: int, metrics: ServiceMetrics, exempt: Collection[str]) -> None:
        self._limit = limit
        self._refused = metrics.rpc_refused
        self._exempt = frozenset(exempt)
        self._in_flight = 0

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        service, method = service_and_method(details.method)
        if service in self._exempt:
            return behaviour

        async def admitted(request: Any, context: grpc.aio.ServicerContext) -> Any:
            if self._in_flight >= self._limit:
                self._refused.labels(service=service, method=method).inc()
                log.info("grpc.refused_busy", method=details.method, limit=self._limit)
                await context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the server is answering its limit of {self._limit} calls at once; "
                    f"try again after {RETRY_AFTER_KEY} seconds",
                    (
                        *(context.trailing_metadata() or ()),
                        (RETRY_AFTER_KEY, f"{RETRY_AFTER_S:g}"),
                    ),
                )
            self._in_flight += 1
            try:
                return await behaviour(request, context)
            finally:
                self._in_flight -= 1

        return admitted

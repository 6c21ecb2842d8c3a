"""What every call goes through before its servicer method: a correlation id, metrics and a
span, then auth (``retrieval.grpc.tenancy``)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog
from google.protobuf.message import DecodeError

from retrieval.grpc.metadata import CORRELATION_ID_KEY, metadata_value
from retrieval.logging import correlation_scope, new_correlation_id
from retrieval.observability.telemetry import Telemetry

log = structlog.get_logger("grpc")

Continuation = Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]]
Behaviour = Callable[[Any, grpc.aio.ServicerContext], Any]
Deserializer = Callable[[bytes], Any]

ACCEPTED_CORRELATION_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
HANDLER_FACTORIES = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def with_behaviour(
    handler: grpc.RpcMethodHandler,
    behaviour: Behaviour,
    request_deserializer: Deserializer | None = None,
) -> grpc.RpcMethodHandler:
    """The same kind of handler, with the same (de)serialisers unless ``request_deserializer``
    replaces the handler's, running ``behaviour``."""
    factory = HANDLER_FACTORIES[(handler.request_streaming, handler.response_streaming)]
    return factory(
        behaviour,
        request_deserializer=request_deserializer or handler.request_deserializer,
        response_serializer=handler.response_serializer,
    )


class Undecodable:
    """What a request whose bytes do not decode (invalid UTF-8 in a string, a truncated
    field) becomes, instead of an error gRPC would answer UNKNOWN outside the call."""

    def __init__(self, error: DecodeError) -> None:
        self.error = error


def tolerant(deserializer: Deserializer | None) -> Deserializer | None:
    """``deserializer``, returning ``Undecodable`` where it would raise ``DecodeError``."""
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as error:
            return Undecodable(error)

    return deserialize


def correlation_id(supplied: str | None) -> str:
    """The caller's id when it is a sane token, else a fresh one."""
    if supplied is not None and ACCEPTED_CORRELATION_ID.fullmatch(supplied):
        return supplied
    return new_correlation_id()


def behaviour_of(handler: grpc.RpcMethodHandler) -> Behaviour | None:
    """What a method does, when its request or its response is unary; None for a
    bidirectional stream (reflection)."""
    if handler.request_streaming and handler.response_streaming:
        return None
    if handler.response_streaming:
        return handler.unary_stream
    return handler.stream_unary if handler.request_streaming else handler.unary_unary


class CallInterceptor(grpc.aio.ServerInterceptor):
    """Wraps what methods do; bidirectional streams (reflection) pass through untouched.

    A method that streams its response writes each message (``context.write``) and returns
    when done, instead of being a generator (the health service's Watch does so, as does
    ``AnswerStream``): what wraps it then awaits the whole call, as it awaits a unary one.
    """

    async def intercept_service(
        self, continuation: Continuation, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler | None:
        handler = await continuation(handler_call_details)
        if handler is None or (behaviour := behaviour_of(handler)) is None:
            return handler
        wrapped = self.wrap(behaviour, handler_call_details)
        return with_behaviour(handler, wrapped, self.request_deserializer(handler))

    def request_deserializer(self, handler: grpc.RpcMethodHandler) -> Deserializer | None:
        """What decodes the request once intercepted; None keeps the handler's."""
        return None

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        """What the method does once intercepted."""
        raise NotImplementedError


class CorrelationIdInterceptor(CallInterceptor):
    """Binds ``x-correlation-id`` (the caller's, or a new one) to every log line of a call.

    The id goes back in the trailing metadata, which a client sees after success and failure
    alike (initial metadata would cost a second send per call). A unary request whose bytes
    do not decode is refused here, INVALID_ARGUMENT with the id, before the interceptors
    after this one (metrics, auth) or the servicer see it; the refusal is logged. A streamed
    message that does not decode reaches the servicer as ``Undecodable``, which refuses it.
    """

    def request_deserializer(self, handler: grpc.RpcMethodHandler) -> Deserializer | None:
        return tolerant(handler.request_deserializer)

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        cid = correlation_id(metadata_value(details.invocation_metadata, CORRELATION_ID_KEY))

        async def correlated(request: Any, context: grpc.aio.ServicerContext) -> Any:
            with correlation_scope(cid):
                context.set_trailing_metadata(((CORRELATION_ID_KEY, cid),))
                if isinstance(request, Undecodable):
                    log.info("grpc.undecodable_request", method=details.method)
                    await context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        f"the request does not decode: {request.error}",
                        context.trailing_metadata(),
                    )
                return await behaviour(request, context)

        return correlated


def service_and_method(full_method: str) -> tuple[str, str]:
    """``/pkg.Service/Method`` as ``("pkg.Service", "Method")``."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    return service, method


class TelemetryInterceptor(CallInterceptor):
    """Counts every call by service, method and status code, times it (a stream to its end),
    keeps the number in flight, and traces it in a span that the service's spans nest in."""

    def __init__(self, telemetry: Telemetry) -> None:
        self._telemetry = telemetry

    def wrap(self, behaviour: Behaviour, details: grpc.HandlerCallDetails) -> Behaviour:
        service, method = service_and_method(details.method)
        telemetry = self._telemetry
        metrics = telemetry.metrics

        async def observed(request: Any, context: grpc.aio.ServicerContext) -> Any:
            in_flight = telemetry.labelled(metrics.rpc_in_flight, service, method)
            in_flight.inc()
            begun = time.perf_counter()
            code = grpc.StatusCode.UNKNOWN
            try:
                with self._telemetry.span(f"rpc {service}/{method}") as span:
                    try:
                        response = await behaviour(request, context)
                    except asyncio.CancelledError:
                        code = grpc.StatusCode.CANCELLED
                        raise
                    except BaseException:
                        code = context.code() or grpc.StatusCode.UNKNOWN
                        raise
                    else:
                        code = context.code() or grpc.StatusCode.OK
                    finally:
                        span.set_attribute("rpc.grpc.status_code", code.value[0])
                    return response
            finally:
                in_flight.dec()
                telemetry.labelled(metrics.rpc_duration, service, method).observe(
                    time.perf_counter() - begun
                )
                telemetry.labelled(metrics.rpc_requests, service, method, code.name).inc()

        return observed

"""``retrieval.v1.RetrievalService``'s calls, one method each, in the in-process services' types:
the lower level of ``RetrievalClient``, which the command line's forwarded commands use.

A failed call raises the ``retrieval.errors`` error the in-process call would (see
``retrieval.grpc.errors``). UNAVAILABLE alone is retried (``retrieval.retries``), with capped
exponential backoff and full jitter, or after the server's ``x-retry-after-s`` when it sends
one, never past the call's deadline: a hint longer than the time left raises
``RateLimitedError`` at once. A server at its limit of calls in flight refuses with such a
hint (RESOURCE_EXHAUSTED), retried the same way. A stream (``answer_stream``) is retried so
only until its first message.

The conversions, the models and the retry loop are imported by the first call that needs
them, so that connecting stays fast.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self, TypeVar

import grpc
from google.protobuf.message import Message

from retrieval.errors import BackendTimeoutError, BackendUnavailableError, RetrievalError
from retrieval.grpc.metadata import AUTHORIZATION_KEY, CORRELATION_ID_KEY
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc

if TYPE_CHECKING:
    from pydantic import SecretStr

    from retrieval.domain.answers import Answer, AnswerEvent, ContextResult
    from retrieval.domain.models import RagDocument, RetrievalQuery, RetrievalResult
    from retrieval.domain.validation import ValidationRequest
    from retrieval.domain.validation_report import ValidationReport
    from retrieval.retries import RetryPolicy
    from retrieval.service.backup.backups import BackupReport, RestoreReport
    from retrieval.service.ingestion.outcomes import DocumentOutcome, SyncReport
    from retrieval.service.ingestion.requests import SyncRequest

T = TypeVar("T")
Response = TypeVar("Response", bound=Message)
UnaryCall = Callable[..., Awaitable[Response]]


def unavailable(error: RetrievalError) -> bool:
    """Whether the call ended UNAVAILABLE: the one status worth trying again."""
    return isinstance(error, BackendUnavailableError) and not isinstance(error, BackendTimeoutError)


class ServiceCalls:
    """Calls a retrieval server on ``channel``; every call ends by its deadline (``timeout`` s,
    or the call's own ``timeout=``), retried as ``retry`` says (None: ``RetryPolicy()``)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        token: SecretStr | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> None:
        self._channel = channel
        self._stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        self._auth = ((AUTHORIZATION_KEY, f"Bearer {token.get_secret_value()}"),) if token else ()
        self._timeout = timeout
        self._retry = retry

    async def close(self) -> None:
        await self._channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def retrieve_query(
        self, query: RetrievalQuery, *, timeout: float | None = None
    ) -> RetrievalResult:
        """As ``RetrievalService.retrieve_query``."""
        from retrieval.grpc.retrieval_conversions import query_request, result_from_proto

        request = query_request(query)
        return result_from_proto(await self._call(self._stub.Retrieve, request, timeout))

    async def build_context(
        self, query: RetrievalQuery, *, timeout: float | None = None
    ) -> ContextResult:
        """As ``AnswerService.build_context``."""
        from retrieval.grpc.answer_conversions import context_result_from_proto
        from retrieval.grpc.retrieval_conversions import query_request

        request = pb.BuildContextRequest(retrieval=query_request(query))
        response = await self._call(self._stub.BuildContext, request, timeout)
        return context_result_from_proto(response)

    async def answer(self, query: RetrievalQuery, *, timeout: float | None = None) -> Answer:
        """As ``AnswerService.answer``; the retrieval's stage timings are not sent back."""
        from retrieval.grpc.answer_conversions import answer_from_proto
        from retrieval.grpc.retrieval_conversions import query_request

        request = pb.AnswerRequest(retrieval=query_request(query))
        response = await self._call(self._stub.Answer, request, timeout)
        return answer_from_proto(response, query.query)

    async def answer_stream(
        self, query: RetrievalQuery, *, timeout: float | None = None
    ) -> AsyncGenerator[AnswerEvent, None]:
        """As ``AnswerService.stream``: an ``AnswerDelta`` for each piece of the text as the
        server's model writes it, then the ``AnswerDone`` (the retrieval's stage timings
        are not sent back). ``timeout`` bounds the whole stream. A call refused before its
        first message is tried again as the other calls are; after, never, so no piece comes
        twice. Closing the generator, or cancelling the task iterating it, cancels the call,
        which stops the model on the server."""
        from retrieval.grpc.answer_conversions import answer_event_from_proto
        from retrieval.grpc.retrieval_conversions import query_request

        request = pb.AnswerStreamRequest(retrieval=query_request(query))
        metadata = self._metadata()

        async def first(left: float) -> tuple[grpc.aio.UnaryStreamCall, Message | None]:
            call = self._stub.AnswerStream(request, timeout=left, metadata=metadata)
            return call, await next_message(call)

        call, message = await self._retried(first, timeout)
        try:
            while message is not None:
                yield answer_event_from_proto(message, query.query)
                message = await next_message(call)
        finally:
            call.cancel()

    async def ingest_documents(
        self,
        documents: Sequence[RagDocument],
        *,
        namespace: str | None = None,
        replace: bool = False,
        refused_as_outcomes: bool = False,
        timeout: float | None = None,
    ) -> list[DocumentOutcome]:
        """As ``IngestionService.ingest``: one outcome per document, in order."""
        from retrieval.domain.models import given_namespace
        from retrieval.grpc.document_conversions import document_to_proto, outcomes_from_proto

        request = pb.IngestDocumentsRequest(
            namespace=given_namespace(namespace) or "",
            documents=[document_to_proto(d) for d in documents],
            replace=replace,
            refused_as_outcomes=refused_as_outcomes,
        )
        return outcomes_from_proto(await self._call(self._stub.IngestDocuments, request, timeout))

    async def sync_documents(
        self, request: SyncRequest, *, timeout: float | None = None
    ) -> SyncReport:
        """As ``LibrarySync.sync``, in one request: every document of the roots travels
        in it, so the server's message size bounds a sync."""
        from retrieval.grpc.document_conversions import sync_report_from_proto, sync_request

        response = await self._call(self._stub.SyncDocuments, sync_request(request), timeout)
        return sync_report_from_proto(response)

    async def delete_document(
        self, document_id: str, *, namespace: str | None = None, timeout: float | None = None
    ) -> int:
        """The chunks deleted with the document (0 when it was not there)."""
        request = pb.DeleteDocumentRequest(document_id=document_id, namespace=namespace or "")
        response = await self._call(self._stub.DeleteDocument, request, timeout)
        return response.deleted_chunks

    async def delete_namespace(self, namespace: str, *, timeout: float | None = None) -> int:
        request = pb.DeleteNamespaceRequest(namespace=namespace)
        response = await self._call(self._stub.DeleteNamespace, request, timeout)
        return response.deleted_chunks

    async def validate(
        self, request: ValidationRequest, *, timeout: float | None = None
    ) -> ValidationReport:
        """As ``ValidationService.validate``, which asks every query: give it time."""
        from retrieval.grpc.validation_conversions import (
            validate_request,
            validation_report_from_proto,
        )

        response = await self._call(self._stub.Validate, validate_request(request), timeout)
        return validation_report_from_proto(response)

    async def backup(
        self, namespace: str, file: str | PathLike[str], *, timeout: float | None = None
    ) -> BackupReport:
        """As ``Backups.backup``: the server writes the namespace's backup, streamed into
        ``file`` here (written whole or not at all). Needs the admin scope; give it time."""
        from retrieval.grpc.backup_transfer import backup_report
        from retrieval.grpc.errors import error_from_rpc

        path = Path(file)
        partial = path.with_name(f"{path.name}.partial")
        request = pb.BackupNamespaceRequest(namespace=namespace)

        async def attempt(left: float) -> pb.BackupSummary:
            call = self._stub.BackupNamespace(request, timeout=left, metadata=self._metadata())
            try:
                with partial.open("wb") as written:
                    async for message in call:
                        if message.HasField("summary"):
                            return message.summary
                        await asyncio.to_thread(written.write, message.data)
            except grpc.aio.AioRpcError as error:
                raise error_from_rpc(error) from error
            raise BackendUnavailableError("the backup's stream ended before its summary")

        try:
            summary = await self._retried(attempt, timeout)
            partial.replace(path)
        finally:
            partial.unlink(missing_ok=True)
        return backup_report(summary, path)

    async def restore(
        self,
        file: str | PathLike[str],
        namespace: str | None = None,
        *,
        replace: bool = False,
        timeout: float | None = None,
    ) -> RestoreReport:
        """As ``Backups.restore``, on the server: ``file`` is checked whole here first
        (``BackupFileError``), then sent. Needs the admin scope; give it time."""
        from retrieval.adapters.backup_file.gzip_json_lines import GzipJsonLinesBackupArchive
        from retrieval.grpc.backup_transfer import restore_report, restore_requests
        from retrieval.grpc.errors import error_from_rpc

        path = Path(file)
        contents = await asyncio.to_thread(GzipJsonLinesBackupArchive().verify, path)
        target = namespace or contents.header.namespace

        async def attempt(left: float) -> pb.RestoreNamespaceResponse:
            requests = restore_requests(path, target, replace)
            try:
                return await self._stub.RestoreNamespace(
                    requests, timeout=left, metadata=self._metadata()
                )
            except grpc.aio.AioRpcError as error:
                raise error_from_rpc(error) from error

        return restore_report(await self._retried(attempt, timeout), path)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        """Auth, and the caller's bound correlation id so both sides log the same one."""
        import structlog

        bound = structlog.contextvars.get_contextvars().get("correlation_id")
        return (*self._auth, (CORRELATION_ID_KEY, bound)) if bound else self._auth

    async def _call(
        self, method: UnaryCall[Response], request: Message, timeout: float | None
    ) -> Response:
        from retrieval.grpc.errors import error_from_rpc

        metadata = self._metadata()

        async def attempt(left: float) -> Response:
            try:
                return await method(request, timeout=left, metadata=metadata)
            except grpc.aio.AioRpcError as error:
                raise error_from_rpc(error) from error

        return await self._retried(attempt, timeout)

    async def _retried(self, attempt: Callable[[float], Awaitable[T]], timeout: float | None) -> T:
        """What ``attempt(seconds left)`` returns, tried again as the module says, within
        ``timeout`` (the client's own when None)."""
        from retrieval.retries import RetryPolicy, retrying

        return await retrying(
            attempt,
            policy=self._retry or RetryPolicy(),
            deadline=time.monotonic() + (self._timeout if timeout is None else timeout),
            what="the call",
            retryable=unavailable,
        )


async def next_message(call: grpc.aio.UnaryStreamCall) -> Message | None:
    """The next message of a stream; None after the last; the error the call ended with."""
    from retrieval.grpc.errors import error_from_rpc

    try:
        message = await call.read()
    except grpc.aio.AioRpcError as error:
        raise error_from_rpc(error) from error
    return None if message is grpc.aio.EOF else message

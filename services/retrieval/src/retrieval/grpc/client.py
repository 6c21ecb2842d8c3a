"""An async client of ``retrieval.v1.RetrievalService`` with the in-process API's types.

``retrieve`` and ``retrieve_query`` return the ``RetrievalResult`` that ``RetrievalService``
returns, per-stage timings and per-source scores included, and a failed call raises the
``retrieval.errors`` error the in-process call would (see ``retrieval.grpc.errors``).
UNAVAILABLE alone is retried (``retrieval.retries``), with capped exponential backoff and
full jitter, or after the server's ``x-retry-after-s`` when it sends one, never past the
call's deadline: a hint longer than the time left raises ``RateLimitedError`` at once. A
server at its limit of calls in flight refuses with such a hint (RESOURCE_EXHAUSTED), retried
the same way. A stream (``answer_stream``) is retried so only until its first message.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self, TypeVar

import grpc
import structlog
from google.protobuf.message import Message
from pydantic import SecretStr

from retrieval.adapters.files.document_files import read_documents
from retrieval.adapters.files.sync_scope import sync_scope
from retrieval.domain.answers import Answer, AnswerEvent, ContextResult
from retrieval.domain.models import (
    RagDocument,
    RetrievalOptions,
    RetrievalQuery,
    RetrievalResult,
)
from retrieval.domain.validation import ValidationRequest
from retrieval.domain.validation_report import ValidationReport
from retrieval.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    RetrievalError,
)
from retrieval.grpc.answer_conversions import (
    answer_event_from_proto,
    answer_from_proto,
    context_result_from_proto,
)
from retrieval.grpc.document_conversions import (
    delete_report_from_proto,
    document_to_proto,
    outcomes_from_proto,
    summary_from_proto,
    sync_report_from_proto,
    sync_request,
)
from retrieval.grpc.errors import error_from_rpc
from retrieval.grpc.metadata import AUTHORIZATION_KEY, CORRELATION_ID_KEY
from retrieval.grpc.remote_intake import RemoteIntake
from retrieval.grpc.retrieval_conversions import query_request, result_from_proto, retrieve_request
from retrieval.grpc.settings import DEFAULT_MAX_MESSAGE_BYTES, message_size_options
from retrieval.grpc.stats_conversions import stats_from_proto
from retrieval.grpc.validation_conversions import validate_request, validation_report_from_proto
from retrieval.retries import RetryPolicy, retrying
from retrieval.service.ingestion.library import DocumentSummary
from retrieval.service.ingestion.local_files import LocalFiles, PathSync
from retrieval.service.ingestion.outcomes import DeleteReport, DocumentOutcome, SyncReport
from retrieval.service.stats import CollectionStats
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc

T = TypeVar("T")
Response = TypeVar("Response", bound=Message)
UnaryCall = Callable[..., Awaitable[Response]]


@dataclass(frozen=True)
class TlsOptions:
    """PEM bytes; without ``root_certificates`` the system's trust store is used."""

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None


def unavailable(error: RetrievalError) -> bool:
    """Whether the call ended UNAVAILABLE: the one status worth trying again."""
    return isinstance(error, BackendUnavailableError) and not isinstance(error, BackendTimeoutError)


class RetrievalClient:
    """Calls a retrieval server on ``channel``; every call ends by its deadline (``timeout`` s)."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        *,
        token: SecretStr | None = None,
        timeout: float = 10.0,
        retry: RetryPolicy = RetryPolicy(),
    ) -> None:
        self._channel = channel
        self._stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
        self._auth = ((AUTHORIZATION_KEY, f"Bearer {token.get_secret_value()}"),) if token else ()
        self._timeout = timeout
        self._retry = retry

    @classmethod
    def connect(
        cls,
        target: str,
        *,
        token: SecretStr | None = None,
        tls: TlsOptions | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        timeout: float = 10.0,
        retry: RetryPolicy = RetryPolicy(),
    ) -> RetrievalClient:
        """A client on a new channel to ``target`` (``host:port``), plaintext unless ``tls``."""
        options = message_size_options(max_message_bytes)
        if tls is None:
            channel = grpc.aio.insecure_channel(target, options=options)
        else:
            credentials = grpc.ssl_channel_credentials(
                tls.root_certificates, tls.private_key, tls.certificate_chain
            )
            channel = grpc.aio.secure_channel(target, credentials, options=options)
        return cls(channel, token=token, timeout=timeout, retry=retry)

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

    async def retrieve(
        self,
        query: str,
        domains: Sequence[str] = (),
        top_k: int | None = None,
        confidence_threshold: float | None = None,
        namespace: str | None = None,
        options: RetrievalOptions | None = None,
        *,
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
    ) -> RetrievalResult:
        """As ``RetrievalService.retrieve``; None keeps the service's default."""
        request = retrieve_request(
            query, domains, top_k, confidence_threshold, namespace, options, source_prefix, section
        )
        return result_from_proto(await self._call(self._stub.Retrieve, request, timeout))

    async def retrieve_query(
        self, query: RetrievalQuery, *, timeout: float | None = None
    ) -> RetrievalResult:
        """As ``RetrievalService.retrieve_query``."""
        request = query_request(query)
        return result_from_proto(await self._call(self._stub.Retrieve, request, timeout))

    async def build_context(
        self, query: RetrievalQuery, *, timeout: float | None = None
    ) -> ContextResult:
        """As ``AnswerService.build_context``."""
        request = pb.BuildContextRequest(retrieval=query_request(query))
        response = await self._call(self._stub.BuildContext, request, timeout)
        return context_result_from_proto(response)

    async def answer(self, query: RetrievalQuery, *, timeout: float | None = None) -> Answer:
        """As ``AnswerService.answer``; the retrieval's stage timings are not sent back."""
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

    async def ingest(
        self,
        documents: Sequence[RagDocument],
        namespace: str | None = None,
        *,
        replace: bool = False,
        refused_as_outcomes: bool = False,
        timeout: float | None = None,
    ) -> list[DocumentOutcome]:
        """As ``IngestionService.ingest``: one outcome per document, in order."""
        request = pb.IngestDocumentsRequest(
            namespace=namespace or "",
            documents=[document_to_proto(d) for d in documents],
            replace=replace,
            refused_as_outcomes=refused_as_outcomes,
        )
        return outcomes_from_proto(await self._call(self._stub.IngestDocuments, request, timeout))

    async def sync(
        self,
        documents: Sequence[RagDocument],
        roots: Sequence[str],
        namespace: str | None = None,
        *,
        unreadable: Collection[str] = (),
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        refused_as_outcomes: bool = False,
        timeout: float | None = None,
    ) -> SyncReport:
        """As ``LibrarySync.sync``, in one request: every document of the roots travels
        in it, so the server's message size bounds a sync."""
        request = sync_request(
            documents,
            roots,
            namespace,
            unreadable=unreadable,
            dry_run=dry_run,
            replace=replace,
            allow_mass_delete=allow_mass_delete,
            refused_as_outcomes=refused_as_outcomes,
        )
        response = await self._call(self._stub.SyncDocuments, request, timeout)
        return sync_report_from_proto(response)

    async def sync_paths(
        self,
        paths: Sequence[Path | str],
        namespace: str | None = None,
        *,
        domain: str | None = None,
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        timeout: float | None = None,
    ) -> PathSync:
        """Read these local files and folders, then sync the namespace with them as ``retrieval
        sync`` does: each path that exists is a root, and a file that fails to read, or a
        document the server refuses, keeps its documents. ``domain`` fills documents that do
        not set their own."""
        local = [Path(path) for path in paths]
        loaded = await asyncio.to_thread(read_documents, local, domain=domain)
        files = LocalFiles(RemoteIntake(self, timeout), sync_scope)
        return await files.sync(
            local,
            loaded,
            namespace or "",
            dry_run=dry_run,
            replace=replace,
            allow_mass_delete=allow_mass_delete,
        )

    async def delete(
        self,
        namespace: str | None = None,
        document_ids: Sequence[str] = (),
        *,
        source_prefix: str | None = None,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> DeleteReport:
        """As ``Library.delete``: by id, by source prefix, or both."""
        request = pb.DeleteDocumentsRequest(
            namespace=namespace or "",
            document_ids=document_ids,
            source_prefix=source_prefix,
            dry_run=dry_run,
        )
        response = await self._call(self._stub.DeleteDocuments, request, timeout)
        return delete_report_from_proto(response)

    async def documents(
        self,
        namespace: str | None = None,
        *,
        source_prefix: str | None = None,
        timeout: float | None = None,
    ) -> list[DocumentSummary]:
        """As ``Library.documents``, fetched a page at a time (each call has
        ``timeout``)."""
        listed: list[DocumentSummary] = []
        token = ""
        while True:
            request = pb.ListDocumentsRequest(
                namespace=namespace or "", source_prefix=source_prefix, page_token=token
            )
            response = await self._call(self._stub.ListDocuments, request, timeout)
            listed.extend(summary_from_proto(summary) for summary in response.documents)
            token = response.next_page_token
            if not token:
                return listed

    async def delete_document(
        self, document_id: str, namespace: str | None = None, *, timeout: float | None = None
    ) -> int:
        request = pb.DeleteDocumentRequest(document_id=document_id, namespace=namespace or "")
        response = await self._call(self._stub.DeleteDocument, request, timeout)
        return response.deleted_chunks

    async def delete_namespace(self, namespace: str, *, timeout: float | None = None) -> int:
        request = pb.DeleteNamespaceRequest(namespace=namespace)
        response = await self._call(self._stub.DeleteNamespace, request, timeout)
        return response.deleted_chunks

    async def stats(self, *, timeout: float | None = None) -> CollectionStats:
        """Sizes and health of the collection; the server audits every namespace to answer."""
        response = await self._call(self._stub.GetStats, pb.GetStatsRequest(), timeout)
        return stats_from_proto(response)

    async def validate(
        self, request: ValidationRequest, *, timeout: float | None = None
    ) -> ValidationReport:
        """As ``ValidationService.validate``, which asks every query: give it time."""
        response = await self._call(self._stub.Validate, validate_request(request), timeout)
        return validation_report_from_proto(response)

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        """Auth, and the caller's bound correlation id so both sides log the same one."""
        bound = structlog.contextvars.get_contextvars().get("correlation_id")
        return (*self._auth, (CORRELATION_ID_KEY, bound)) if bound else self._auth

    async def _call(
        self, method: UnaryCall[Response], request: Message, timeout: float | None
    ) -> Response:
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
        return await retrying(
            attempt,
            policy=self._retry,
            deadline=time.monotonic() + (self._timeout if timeout is None else timeout),
            what="the call",
            retryable=unavailable,
        )


async def next_message(call: grpc.aio.UnaryStreamCall) -> Message | None:
    """The next message of a stream; None after the last; the error the call ended with."""
    try:
        message = await call.read()
    except grpc.aio.AioRpcError as error:
        raise error_from_rpc(error) from error
    return None if message is grpc.aio.EOF else message

"""``RetrievalClient``: the knowledge base of a ``retrieval serve``, over gRPC.

Its methods are ``KnowledgeBaseApi``'s (``retrieval.client_api``), as ``KnowledgeBase`` has
them in process: the same arguments and defaults, the same result types (per-stage timings
and per-source scores included), the same errors; ``timeout=`` is each call's gRPC deadline.
Local files are read here and written by the server through the local-files use case
(``retrieval.grpc.remote_intake``): one bad file fails alone, as it does in process. The
service's calls one by one (``retrieve_query``, ``answer``, ``ingest_documents``, ...) are
``ServiceCalls``'s, retried as ``retrieval.grpc.service_calls`` says.

Importing this module loads gRPC and the protocol, not the stores, the model or the
container; a call loads the models it returns on first use.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from retrieval.client_api import KnowledgeBaseApi
from retrieval.grpc.channels import DEFAULT_MAX_MESSAGE_BYTES, message_size_options
from retrieval.grpc.service_calls import ServiceCalls
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

if TYPE_CHECKING:
    from pydantic import SecretStr

    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import RetrievalQuery, RetrievalResult
    from retrieval.retries import RetryPolicy
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import LocalFiles
    from retrieval.service.ingestion.outcomes import DeleteReport
    from retrieval.service.ingestion.requests import DeleteRequest
    from retrieval.service.stats import CollectionStats
    from retrieval.sync_facade import SyncKnowledgeBase


@dataclass(frozen=True)
class TlsOptions:
    """PEM bytes; without ``root_certificates`` the system's trust store is used."""

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None


class RetrievalClient(ServiceCalls, KnowledgeBaseApi):
    """The knowledge base a server holds: ``KnowledgeBaseApi`` over ``channel``."""

    @classmethod
    def connect(
        cls,
        target: str,
        *,
        token: SecretStr | None = None,
        tls: TlsOptions | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        timeout: float = 10.0,
        retry: RetryPolicy | None = None,
    ) -> RetrievalClient:
        """A client on a new channel to ``target`` (``host:port``), plaintext unless ``tls``;
        an async context manager that closes the channel on leaving."""
        options = message_size_options(max_message_bytes)
        if tls is None:
            channel = grpc.aio.insecure_channel(target, options=options)
        else:
            credentials = grpc.ssl_channel_credentials(
                tls.root_certificates, tls.private_key, tls.certificate_chain
            )
            channel = grpc.aio.secure_channel(target, credentials, options=options)
        return cls(channel, token=token, timeout=timeout, retry=retry)

    @classmethod
    def connect_sync(cls, target: str, **connection: Any) -> SyncKnowledgeBase:
        """``connect``, for code without an event loop: the client behind blocking methods,
        run on a loop of its own (``retrieval.sync_facade``). Close it to close the channel."""
        from retrieval.sync_facade import SyncKnowledgeBase

        return SyncKnowledgeBase(lambda: cls.connect(target, **connection))

    async def _retrieve(self, query: RetrievalQuery, timeout: float | None) -> RetrievalResult:
        return await self.retrieve_query(query, timeout=timeout)

    async def _answer(self, query: RetrievalQuery, timeout: float | None) -> Answer:
        return await self.answer(query, timeout=timeout)

    def _answer_stream(
        self, query: RetrievalQuery, timeout: float | None
    ) -> AsyncGenerator[AnswerEvent, None]:
        return self.answer_stream(query, timeout=timeout)

    async def _delete(self, request: DeleteRequest, timeout: float | None) -> DeleteReport:
        from retrieval.grpc.document_conversions import delete_report_from_proto

        message = pb.DeleteDocumentsRequest(
            namespace=request.namespace or "",
            document_ids=request.document_ids,
            source_prefix=request.source_prefix,
            dry_run=request.dry_run,
        )
        response = await self._call(self._stub.DeleteDocuments, message, timeout)
        return delete_report_from_proto(response)

    async def _documents(
        self, namespace: str | None, source_prefix: str | None, timeout: float | None
    ) -> list[DocumentSummary]:
        """Fetched a page at a time, each call with ``timeout``."""
        from retrieval.grpc.document_conversions import summary_from_proto

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

    async def _stats(self, timeout: float | None) -> CollectionStats:
        """The server audits every namespace to answer."""
        from retrieval.grpc.stats_conversions import stats_from_proto

        response = await self._call(self._stub.GetStats, pb.GetStatsRequest(), timeout)
        return stats_from_proto(response)

    def _local_files(self) -> LocalFiles:
        """Every document of an ingest sent ``remote_intake.DOCUMENTS_PER_CALL`` a call."""
        from retrieval.grpc.remote_intake import remote_local_files

        return remote_local_files(self)

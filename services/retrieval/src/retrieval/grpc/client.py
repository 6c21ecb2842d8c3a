"""``RetrievalClient``: the knowledge base of a ``retrieval serve``, over gRPC.

Its methods are ``KnowledgeBaseApi``'s (``retrieval.client_api``), as ``KnowledgeBase`` has
them in process: the same arguments and defaults, the same result types (per-stage timings
and per-source scores included), the same errors, and ``timeout=`` (seconds) on each call.
Local files are read here and written by the server through the local-files use case
(``retrieval.grpc.remote_intake``): one bad file fails alone, as it does in process. The
service's calls one by one (``retrieve_query``, ``answer``, ``ingest_documents``, ...) are
``ServiceCalls``'s, retried as ``retrieval.grpc.service_calls`` says.

Importing this module loads gRPC and the protocol, not the stores, the model or the
container; a call loads the models it returns on first use.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import grpc

from retrieval.grpc.channels import DEFAULT_MAX_MESSAGE_BYTES, message_size_options
from retrieval.grpc.service_calls import ServiceCalls
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

if TYPE_CHECKING:
    from pydantic import SecretStr

    from retrieval.adapters.files.document_files import LoadedDocuments
    from retrieval.client_api import LocalPath, Sources
    from retrieval.domain.answers import Answer, AnswerEvent
    from retrieval.domain.models import RetrievalResult
    from retrieval.retries import RetryPolicy
    from retrieval.service.ingestion.library import DocumentSummary
    from retrieval.service.ingestion.local_files import IngestReport, LocalFiles, PathSync
    from retrieval.service.ingestion.outcomes import DeleteReport
    from retrieval.service.stats import CollectionStats
    from retrieval.sync_facade import SyncKnowledgeBase


@dataclass(frozen=True)
class TlsOptions:
    """PEM bytes; without ``root_certificates`` the system's trust store is used."""

    root_certificates: bytes | None = None
    certificate_chain: bytes | None = None
    private_key: bytes | None = None


class RetrievalClient(ServiceCalls):
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

    async def retrieve(
        self,
        query: str,
        *,
        namespace: str | None = None,
        top_k: int = 5,
        threshold: float = 0.0,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
        **options: Any,
    ) -> RetrievalResult:
        """As ``KnowledgeBaseApi.retrieve``; the server checks the request."""
        from retrieval.adapters.files.local_sources import source_or_none
        from retrieval.domain.models import RetrievalOptions, validated
        from retrieval.grpc.retrieval_conversions import result_from_proto, retrieve_request

        request = retrieve_request(
            query,
            domains,
            top_k,
            threshold,
            namespace,
            validated(RetrievalOptions, **options),
            source_or_none(source_prefix),
            section,
        )
        return result_from_proto(await self._call(self._stub.Retrieve, request, timeout))

    async def ingest(
        self,
        sources: Sources,
        *,
        namespace: str | None = None,
        domain: str | None = None,
        replace: bool = False,
        timeout: float | None = None,
    ) -> IngestReport:
        """As ``KnowledgeBaseApi.ingest``: the files are read here, every document sent
        ``remote_intake.DOCUMENTS_PER_CALL`` a call, each with ``timeout``."""
        from retrieval.client_api import split_sources

        paths, given = split_sources(sources)
        loaded = await read_files(paths, domain)
        return await self._local_files(timeout).ingest(
            loaded, namespace, documents=given, replace=replace
        )

    async def sync(
        self,
        paths: LocalPath | Iterable[LocalPath],
        *,
        namespace: str | None = None,
        domain: str | None = None,
        dry_run: bool = False,
        replace: bool = False,
        allow_mass_delete: bool = False,
        timeout: float | None = None,
    ) -> PathSync:
        """As ``KnowledgeBaseApi.sync``: the files are read here and every document of the
        roots sent in one request, so the server's message size bounds a sync."""
        from retrieval.client_api import local_paths

        local = local_paths(paths)
        loaded = await read_files(local, domain)
        return await self._local_files(timeout).sync(
            local,
            loaded,
            namespace,
            dry_run=dry_run,
            replace=replace,
            allow_mass_delete=allow_mass_delete,
        )

    async def delete(
        self,
        document_ids: Sequence[str] = (),
        *,
        namespace: str | None = None,
        source_prefix: str | None = None,
        dry_run: bool = False,
        timeout: float | None = None,
    ) -> DeleteReport:
        """As ``KnowledgeBaseApi.delete``."""
        from retrieval.adapters.files.local_sources import source_or_none
        from retrieval.grpc.document_conversions import delete_report_from_proto

        request = pb.DeleteDocumentsRequest(
            namespace=namespace or "",
            document_ids=document_ids,
            source_prefix=source_or_none(source_prefix),
            dry_run=dry_run,
        )
        response = await self._call(self._stub.DeleteDocuments, request, timeout)
        return delete_report_from_proto(response)

    async def documents(
        self,
        *,
        namespace: str | None = None,
        source_prefix: str | None = None,
        timeout: float | None = None,
    ) -> list[DocumentSummary]:
        """As ``KnowledgeBaseApi.documents``, fetched a page at a time (each call has
        ``timeout``)."""
        from retrieval.adapters.files.local_sources import source_or_none
        from retrieval.grpc.document_conversions import summary_from_proto

        listed: list[DocumentSummary] = []
        token = ""
        while True:
            request = pb.ListDocumentsRequest(
                namespace=namespace or "",
                source_prefix=source_or_none(source_prefix),
                page_token=token,
            )
            response = await self._call(self._stub.ListDocuments, request, timeout)
            listed.extend(summary_from_proto(summary) for summary in response.documents)
            token = response.next_page_token
            if not token:
                return listed

    async def ask(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
    ) -> Answer:
        """As ``KnowledgeBaseApi.ask``, answered by the server's language model."""
        from retrieval.client_api import question_query

        query = question_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return await self.answer(query, timeout=timeout)

    def ask_stream(
        self,
        question: str,
        *,
        namespace: str | None = None,
        top_k: int = 8,
        domains: Sequence[str] = (),
        source_prefix: str | None = None,
        section: str | None = None,
        timeout: float | None = None,
    ) -> AsyncGenerator[AnswerEvent, None]:
        """As ``KnowledgeBaseApi.ask_stream``; ``timeout`` bounds the whole stream."""
        from retrieval.client_api import question_query

        query = question_query(
            question,
            namespace=namespace,
            top_k=top_k,
            domains=domains,
            source_prefix=source_prefix,
            section=section,
        )
        return self.answer_stream(query, timeout=timeout)

    async def stats(self, *, timeout: float | None = None) -> CollectionStats:
        """As ``KnowledgeBaseApi.stats``; the server audits every namespace to answer."""
        from retrieval.grpc.stats_conversions import stats_from_proto

        response = await self._call(self._stub.GetStats, pb.GetStatsRequest(), timeout)
        return stats_from_proto(response)

    def _local_files(self, timeout: float | None) -> LocalFiles:
        """The local-files use case, writing through this client."""
        from retrieval.adapters.files.sync_scope import sync_scope
        from retrieval.grpc.remote_intake import RemoteIntake
        from retrieval.service.ingestion.local_files import LocalFiles

        return LocalFiles(RemoteIntake(self, timeout), sync_scope)


async def read_files(paths: list[Path], domain: str | None) -> LoadedDocuments:
    """The documents of local files and folders, read off the event loop."""
    from retrieval.adapters.files.document_files import read_documents

    return await asyncio.to_thread(read_documents, paths, domain=domain)

"""``retrieval.v1.RetrievalService`` over the in-process services: same calls, same answers."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sized
from contextlib import aclosing
from dataclasses import dataclass
from pathlib import Path

import grpc

from retrieval.errors import InvalidRequestError
from retrieval.grpc.answer_conversions import (
    answer_event_to_proto,
    answer_to_proto,
    context_result_to_proto,
)
from retrieval.grpc.backup_transfer import (
    backup_summary,
    file_parts,
    received_file,
    restore_response,
    restore_target,
    scratch_file,
)
from retrieval.grpc.document_conversions import (
    delete_report_to_proto,
    delete_request_from_proto,
    documents_from_proto,
    documents_page,
    outcomes_to_proto,
    page_size,
    sync_report_to_proto,
    sync_request_from_proto,
)
from retrieval.grpc.errors import translate_errors
from retrieval.grpc.proto_values import optional_field, optional_namespace
from retrieval.grpc.retrieval_conversions import query_from_proto, result_to_proto
from retrieval.grpc.stats_conversions import stats_to_proto
from retrieval.grpc.tenancy import visible_namespaces
from retrieval.grpc.validation_conversions import (
    validation_report_to_proto,
    validation_request_from_proto,
)
from retrieval.service.answers.answer_service import AnswerService
from retrieval.service.backup.backups import Backups
from retrieval.service.ingestion.ingestion_service import IngestionService
from retrieval.service.ingestion.library_service import Library
from retrieval.service.ingestion.sync import LibrarySync
from retrieval.service.retrieval.retrieval_service import RetrievalService
from retrieval.service.stats import StatsService
from retrieval.service.validation_service import ValidationService
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb
from retrieval_proto.retrieval.v1 import retrieval_pb2_grpc


@dataclass(frozen=True, eq=False)
class RetrievalServicer(retrieval_pb2_grpc.RetrievalServiceServicer):
    retrieval: RetrievalService
    ingestion: IngestionService
    library: Library
    sync: LibrarySync
    stats: StatsService
    answers: AnswerService
    validation: ValidationService
    backups: Backups
    scratch: Path
    """Where backup files sent or received are kept for their call."""
    max_documents_per_call: int

    def _check_count(self, items: Sized, field: str, remedy: str) -> None:
        """Bound the documents of one call, which runs as a whole under one deadline."""
        if len(items) > self.max_documents_per_call:
            raise InvalidRequestError(
                f"{len(items)} documents in one call; at most {self.max_documents_per_call} "
                f"(RETRIEVAL_GRPC_MAX_DOCUMENTS_PER_CALL): {remedy}",
                field=field,
            )

    @translate_errors
    async def Retrieve(
        self, request: pb.RetrieveRequest, context: grpc.aio.ServicerContext
    ) -> pb.RetrieveResponse:
        return result_to_proto(await self.retrieval.retrieve_query(query_from_proto(request)))

    @translate_errors
    async def IngestDocuments(
        self, request: pb.IngestDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> pb.IngestDocumentsResponse:
        namespace = optional_namespace(request.namespace)
        self._check_count(request.documents, "documents", "send them in several calls")
        documents = documents_from_proto(request.documents)
        outcomes = await self.ingestion.ingest(
            documents,
            namespace,
            replace=request.replace,
            refused_as_outcomes=request.refused_as_outcomes,
        )
        return outcomes_to_proto(outcomes)

    @translate_errors
    async def DeleteDocument(
        self, request: pb.DeleteDocumentRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteDocumentResponse:
        deleted = await self.library.delete_document(
            request.document_id, optional_namespace(request.namespace)
        )
        return pb.DeleteDocumentResponse(deleted_chunks=deleted)

    @translate_errors
    async def DeleteNamespace(
        self, request: pb.DeleteNamespaceRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteNamespaceResponse:
        deleted = await self.library.delete_namespace(request.namespace)
        return pb.DeleteNamespaceResponse(deleted_chunks=deleted)

    @translate_errors
    async def GetStats(
        self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatsResponse:
        return stats_to_proto(await self.stats.collect(visible_namespaces()))

    @translate_errors
    async def BuildContext(
        self, request: pb.BuildContextRequest, context: grpc.aio.ServicerContext
    ) -> pb.BuildContextResponse:
        built = await self.answers.build_context(query_from_proto(request.retrieval))
        return context_result_to_proto(built)

    @translate_errors
    async def Answer(
        self, request: pb.AnswerRequest, context: grpc.aio.ServicerContext
    ) -> pb.AnswerResponse:
        return answer_to_proto(await self.answers.answer(query_from_proto(request.retrieval)))

    @translate_errors
    async def AnswerStream(
        self, request: pb.AnswerStreamRequest, context: grpc.aio.ServicerContext
    ) -> None:
        """Writes each event as it comes (a writer, not a generator: see
        ``retrieval.grpc.interceptors.CallInterceptor``). The caller cancelling the call
        cancels this task, which closes the answer's stream and with it the model's call."""
        events = self.answers.stream(query_from_proto(request.retrieval))
        async with aclosing(events):
            async for event in events:
                await context.write(answer_event_to_proto(event))

    @translate_errors
    async def Validate(
        self, request: pb.ValidateRequest, context: grpc.aio.ServicerContext
    ) -> pb.ValidateResponse:
        report = await self.validation.validate(validation_request_from_proto(request))
        return validation_report_to_proto(report)

    @translate_errors
    async def SyncDocuments(
        self, request: pb.SyncDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> pb.SyncDocumentsResponse:
        self._check_count(request.documents, "documents", "sync each folder in a call of its own")
        report = await self.sync.sync(sync_request_from_proto(request))
        return sync_report_to_proto(report)

    @translate_errors
    async def DeleteDocuments(
        self, request: pb.DeleteDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteDocumentsResponse:
        self._check_count(request.document_ids, "document_ids", "send them in several calls")
        report = await self.library.apply(delete_request_from_proto(request))
        return delete_report_to_proto(report)

    @translate_errors
    async def ListDocuments(
        self, request: pb.ListDocumentsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListDocumentsResponse:
        size = page_size(request)
        documents = await self.library.documents(
            optional_namespace(request.namespace),
            source_prefix=optional_field(request, "source_prefix"),
        )
        return documents_page(documents, size, request.page_token)

    @translate_errors
    async def BackupNamespace(
        self, request: pb.BackupNamespaceRequest, context: grpc.aio.ServicerContext
    ) -> None:
        """Writes the file's parts, then its summary (a writer: see ``AnswerStream``)."""
        with scratch_file(self.scratch, "backup.jsonl.gz") as path:
            report = await self.backups.backup(request.namespace, path)
            async for part in file_parts(path):
                await context.write(pb.BackupNamespaceResponse(data=part))
        await context.write(pb.BackupNamespaceResponse(summary=backup_summary(report)))

    @translate_errors
    async def RestoreNamespace(
        self,
        requests: AsyncIterator[pb.RestoreNamespaceRequest],
        context: grpc.aio.ServicerContext,
    ) -> pb.RestoreNamespaceResponse:
        with scratch_file(self.scratch, "restore.jsonl.gz") as path:
            namespace, replace = restore_target(await received_file(requests, path))
            report = await self.backups.restore(path, namespace, replace=replace)
        return restore_response(report)

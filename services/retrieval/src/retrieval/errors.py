"""Every error the retrieval service raises.

Adapters translate the errors of the libraries they wrap into these
(``raise ... from exc``), so callers and the gRPC layer handle one hierarchy::

    RetrievalError
    ├── InvalidRequestError          bad input, rejected at the boundary (.field names it)
    │   ├── InvalidFilterError       a malformed metadata filter
    │   ├── EmbeddingModelMismatchError  vectors from another model or dimension
    │   ├── DocumentIdClashError     a document id already taken by another source
    │   ├── MassDeleteError          a sync would delete more of a namespace than allowed
    │   ├── BackupFileError          a backup file that is corrupt, truncated or unreadable
    │   └── NamespaceNotEmptyError   a restore into a namespace holding other documents
    ├── NotFoundError
    │   ├── IndexNotFoundError
    │   └── NamespaceNotFoundError
    ├── BackendNotConfiguredError    a backend has no connection settings
    ├── ConfigurationError           the service's own settings are unusable: it will not start
    │   └── TokensFileError          RETRIEVAL_GRPC_TOKENS_FILE is unreadable or invalid
    ├── DocumentBusyError            another call is writing the document (retry later)
    └── BackendError                 a backend failed while serving a call
        ├── NotAuthorisedError       401 / 403
        │   └── PermissionDeniedError  a known token outside its namespaces or scopes
        ├── PayloadTooLargeError     413: a request the service should have split
        ├── BackendUnavailableError  5xx, connection refused (retryable)
        │   ├── RateLimitedError     429 (.retry_after seconds, when known)
        │   ├── BackendTimeoutError  no answer within the timeout
        │   └── DataDirectoryInUseError  another process holds an embedded store's directory
        ├── UnreadableReplyError     a model's reply is not in the form it was asked for
        └── IngestionError           a document could not be written
"""

from __future__ import annotations

from pathlib import Path


class RetrievalError(Exception):
    """Base of every error this service raises."""


class InvalidRequestError(RetrievalError, ValueError):
    """The caller sent something the service cannot accept."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.reason = message


class InvalidFilterError(InvalidRequestError):
    """A metadata filter uses an unknown operator or a value of the wrong type."""

    def __init__(self, message: str, *, path: str = "filter") -> None:
        super().__init__(message, field=path)


class EmbeddingModelMismatchError(InvalidRequestError):
    """A namespace was written by another embedding model or dimension."""


class DocumentIdClashError(InvalidRequestError):
    """A document would replace one of the same id that came from another source."""

    def __init__(self, document_id: str, existing: str | None, incoming: str | None) -> None:
        super().__init__(
            f"document id {document_id!r} already holds {describe(existing)}; "
            f"{describe(incoming)} maps to the same id and was not written. Give one of them "
            "another id (front matter 'document_id:', or ingest their common parent folder so "
            "their paths differ), or replace the stored one on purpose (--replace)",
            field="document_id",
        )
        self.document_id = document_id
        self.existing = existing
        self.incoming = incoming


def describe(source: str | None) -> str:
    return source if source is not None else "a document without a source"


class MassDeleteError(InvalidRequestError):
    """A sync would delete a larger share of a namespace than the setting allows."""

    def __init__(self, namespace: str, doomed: int, total: int, share: float) -> None:
        super().__init__(
            f"sync would delete {doomed} of the {total} documents of namespace {namespace!r} "
            f"({doomed / total:.0%}), more than RETRIEVAL_SYNC_MAX_DELETE_SHARE "
            f"({share:.0%}) allows; nothing was changed. Check the paths, or pass "
            "--allow-mass-delete (allow_mass_delete=True)",
            field="allow_mass_delete",
        )
        self.doomed = doomed
        self.total = total


class BackupFileError(InvalidRequestError):
    """A backup file is not one, is corrupt or truncated, or has a format version this
    service does not read; nothing was restored from it."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}; nothing was restored", field="file")
        self.path = path


class NamespaceNotEmptyError(InvalidRequestError):
    """A restore would write into a namespace holding documents the backup does not have."""

    def __init__(self, namespace: str, others: list[str]) -> None:
        shown = ", ".join(repr(o) for o in others[:3]) + (", ..." if len(others) > 3 else "")
        super().__init__(
            f"namespace {namespace!r} holds {len(others)} documents that are not in the backup "
            f"({shown}); nothing was restored. Restore into an empty namespace (--namespace), "
            "or pass --replace (replace=True) to make it hold exactly the backup's documents",
            field="namespace",
        )
        self.namespace = namespace
        self.others = others


class NotFoundError(RetrievalError):
    """Something the call names does not exist."""


class IndexNotFoundError(NotFoundError):
    """The vector index does not exist."""


class NamespaceNotFoundError(NotFoundError):
    """The namespace holds no vectors."""

    def __init__(self, namespace: str) -> None:
        super().__init__(f"namespace {namespace!r} does not exist or holds no vectors")
        self.namespace = namespace


class BackendNotConfiguredError(RetrievalError):
    """A backend was selected but its connection settings are missing."""


class ConfigurationError(RetrievalError):
    """The service's own settings are unusable; it refuses to start and says which."""


class TokensFileError(ConfigurationError):
    """The tokens file cannot be read, or one of its entries is invalid."""


class DocumentBusyError(RetrievalError):
    """Another call holds the document's write lease; retrying later may succeed."""

    def __init__(self, message: str, *, document_id: str | None = None) -> None:
        super().__init__(message)
        self.document_id = document_id

    @classmethod
    def of(cls, namespace: str, document_id: str) -> DocumentBusyError:
        return cls(
            f"document {document_id!r} in namespace {namespace!r} is being written by another "
            "call; try again later",
            document_id=document_id,
        )


class BackendError(RetrievalError):
    """A backend failed while serving a call."""


class NotAuthorisedError(BackendError):
    """The backend refused the credentials."""


class PermissionDeniedError(NotAuthorisedError):
    """The credentials are known, but do not grant this scope in this namespace."""


class PayloadTooLargeError(BackendError):
    """The backend refused a request as too large."""


class BackendUnavailableError(BackendError):
    """The backend could not serve the call now; trying again later may succeed."""


class RateLimitedError(BackendUnavailableError):
    """The backend asked the caller to slow down."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BackendTimeoutError(BackendUnavailableError):
    """The backend gave no answer within the timeout."""


class DataDirectoryInUseError(BackendUnavailableError):
    """Another process holds the directory of an embedded store; only one may use it at a time.

    ``pid`` and ``command`` name the holder when it recorded them.
    """

    def __init__(self, directory: Path, *, pid: int | None, command: str | None) -> None:
        holder = f"process {pid} ({command})" if pid is not None else "another process"
        super().__init__(
            f"{directory} is in use by {holder}; only one process may use a data directory. "
            "Stop that process, or, if it is `retrieval serve`, send your requests to it "
            "with the gRPC client (retrieval.grpc.RetrievalClient)"
        )
        self.directory = directory
        self.pid = pid
        self.command = command


class UnreadableReplyError(BackendError):
    """A model answered, but not in the form it was asked for (JSON of a given shape, say)."""


class IngestionError(BackendError):
    """A document could not be ingested; nothing half-written was left behind."""

"""The gRPC entrypoint: contract ``retrieval.v1.RetrievalService`` (package ``retrieval-proto``).

``create_server`` serves a running ``Application``; ``RetrievalClient`` calls it and returns the
same Pydantic models as the in-process services. The names are imported on first use, so that
a client does not load the server's stores and model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from retrieval.lazy_names import importer, listing

if TYPE_CHECKING:
    from retrieval.domain.collection_health import HealthStatus
    from retrieval.grpc.client import RetrievalClient, TlsOptions
    from retrieval.grpc.server import create_server, serve, stop_on_signals
    from retrieval.grpc.settings import GrpcSettings
    from retrieval.retries import RetryPolicy
    from retrieval.service.ingestion.local_files import PathSync
    from retrieval.service.stats import CollectionStats, NamespaceHealth

MODULE_OF = {
    "CollectionStats": "retrieval.service.stats",
    "GrpcSettings": "retrieval.grpc.settings",
    "HealthStatus": "retrieval.domain.collection_health",
    "NamespaceHealth": "retrieval.service.stats",
    "PathSync": "retrieval.service.ingestion.local_files",
    "RetrievalClient": "retrieval.grpc.client",
    "RetryPolicy": "retrieval.retries",
    "TlsOptions": "retrieval.grpc.client",
    "create_server": "retrieval.grpc.server",
    "serve": "retrieval.grpc.server",
    "stop_on_signals": "retrieval.grpc.server",
}

__all__ = [
    "CollectionStats",
    "GrpcSettings",
    "HealthStatus",
    "NamespaceHealth",
    "PathSync",
    "RetrievalClient",
    "RetryPolicy",
    "TlsOptions",
    "create_server",
    "serve",
    "stop_on_signals",
]


__getattr__ = importer("retrieval.grpc", MODULE_OF, globals())
__dir__ = listing(globals())

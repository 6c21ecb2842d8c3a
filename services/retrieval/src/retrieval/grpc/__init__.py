"""The gRPC entrypoint: contract ``retrieval.v1.RetrievalService`` (package ``retrieval-proto``).

``create_server`` serves a running ``Application``; ``RetrievalClient`` calls it and returns the
same Pydantic models as the in-process services.
"""

from retrieval.domain.collection_health import HealthStatus
from retrieval.grpc.client import PathSync, RetrievalClient, RetryPolicy, TlsOptions
from retrieval.grpc.server import create_server, serve, stop_on_signals
from retrieval.grpc.settings import GrpcSettings
from retrieval.service.stats import CollectionStats, NamespaceHealth

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

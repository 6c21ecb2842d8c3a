"""``CollectionStats`` to ``GetStatsResponse`` and back."""

from __future__ import annotations

from retrieval.domain.collection_health import Footprint, HealthStatus, Orphans
from retrieval.grpc.proto_values import plain_fields
from retrieval.service.stats import CollectionStats, NamespaceHealth
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

STATUSES = {
    HealthStatus.GREEN: pb.HEALTH_STATUS_GREEN,
    HealthStatus.YELLOW: pb.HEALTH_STATUS_YELLOW,
    HealthStatus.RED: pb.HEALTH_STATUS_RED,
}
STATUSES_BY_NUMBER = {number: status for status, number in STATUSES.items()}


def namespace_to_proto(namespace: NamespaceHealth) -> pb.NamespaceStats:
    return pb.NamespaceStats(
        **namespace.model_dump(exclude={"status"}), status=STATUSES[namespace.status]
    )


def namespace_from_proto(namespace: pb.NamespaceStats) -> NamespaceHealth:
    orphans = namespace.orphans
    return NamespaceHealth(
        **plain_fields(namespace, NamespaceHealth),
        status=STATUSES_BY_NUMBER[namespace.status],
        orphans=(
            Orphans(**plain_fields(orphans, Orphans)) if namespace.HasField("orphans") else None
        ),
    )


def stats_to_proto(stats: CollectionStats) -> pb.GetStatsResponse:
    return pb.GetStatsResponse(
        **stats.model_dump(exclude={"namespaces", "status"}),
        namespaces=[namespace_to_proto(namespace) for namespace in stats.namespaces],
        status=STATUSES[stats.status],
    )


def stats_from_proto(response: pb.GetStatsResponse) -> CollectionStats:
    return CollectionStats(
        **plain_fields(response, CollectionStats),
        status=STATUSES_BY_NUMBER[response.status],
        namespaces=tuple(namespace_from_proto(namespace) for namespace in response.namespaces),
        footprints=tuple(
            Footprint(**plain_fields(footprint, Footprint)) for footprint in response.footprints
        ),
    )

"""``CollectionStats`` to ``GetStatsResponse`` and back."""

from __future__ import annotations

from retrieval.domain.collection_health import Footprint, HealthStatus, Orphans
from retrieval.grpc.proto_values import optional_field, present
from retrieval.service.stats import CollectionStats, NamespaceHealth
from retrieval_proto.retrieval.v1 import retrieval_pb2 as pb

STATUSES = {
    HealthStatus.GREEN: pb.HEALTH_STATUS_GREEN,
    HealthStatus.YELLOW: pb.HEALTH_STATUS_YELLOW,
    HealthStatus.RED: pb.HEALTH_STATUS_RED,
}
STATUSES_BY_NUMBER = {number: status for status, number in STATUSES.items()}


def namespace_to_proto(namespace: NamespaceHealth) -> pb.NamespaceStats:
    orphans = namespace.orphans
    return pb.NamespaceStats(
        namespace=namespace.namespace,
        vector_count=namespace.vector_count,
        chunk_count=namespace.chunk_count,
        status=STATUSES[namespace.status],
        reasons=namespace.reasons,
        orphans=None if orphans is None else pb.NamespaceOrphans(**orphans.model_dump()),
        entity_count=namespace.entity_count,
    )


def namespace_from_proto(namespace: pb.NamespaceStats) -> NamespaceHealth:
    orphans = namespace.orphans
    return NamespaceHealth(
        namespace=namespace.namespace,
        status=STATUSES_BY_NUMBER[namespace.status],
        reasons=tuple(namespace.reasons),
        vector_count=namespace.vector_count,
        chunk_count=optional_field(namespace, "chunk_count"),
        orphans=(
            Orphans.model_validate({name: getattr(orphans, name) for name in Orphans.model_fields})
            if namespace.HasField("orphans")
            else None
        ),
        entity_count=optional_field(namespace, "entity_count"),
    )


def footprint_from_proto(footprint: pb.StoreFootprint) -> Footprint:
    return Footprint(
        store=footprint.store,
        disk_bytes=optional_field(footprint, "disk_bytes"),
        memory_bytes=optional_field(footprint, "memory_bytes"),
    )


def stats_to_proto(stats: CollectionStats) -> pb.GetStatsResponse:
    return pb.GetStatsResponse(
        dimension=stats.dimension,
        total_vector_count=stats.total_vector_count,
        namespaces=[namespace_to_proto(namespace) for namespace in stats.namespaces],
        status=STATUSES[stats.status],
        reasons=stats.reasons,
        embedding_model=stats.embedding_model,
        total_chunk_count=stats.total_chunk_count,
        footprints=[pb.StoreFootprint(**footprint.model_dump()) for footprint in stats.footprints],
    )


def stats_from_proto(response: pb.GetStatsResponse) -> CollectionStats:
    totals = present(response, ["dimension", "total_vector_count", "total_chunk_count"])
    return CollectionStats(
        status=STATUSES_BY_NUMBER[response.status],
        reasons=tuple(response.reasons),
        embedding_model=response.embedding_model,
        dimension=totals.get("dimension"),
        total_vector_count=totals.get("total_vector_count"),
        total_chunk_count=totals.get("total_chunk_count"),
        namespaces=tuple(namespace_from_proto(namespace) for namespace in response.namespaces),
        footprints=tuple(footprint_from_proto(footprint) for footprint in response.footprints),
    )

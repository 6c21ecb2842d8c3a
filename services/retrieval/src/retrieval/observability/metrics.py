"""The service's Prometheus metrics, held in a registry of their own (never the global one)."""

from __future__ import annotations

from functools import partial

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS_S = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
MATCH_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50, 100)
SCORE_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
RPC_LABELS = ("service", "method")
LOOKUP_LABELS = ("result",)
"""A cache lookup's result: ``hit`` or ``miss``."""


class ServiceMetrics:
    """Counters, gauges and histograms of calls, stages, errors, the cache and store health."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        counter = partial(Counter, registry=registry)
        gauge = partial(Gauge, registry=registry)
        histogram = partial(Histogram, registry=registry)
        self.rpc_requests = counter(
            "retrieval_rpc_requests",
            "gRPC calls handled, by service, method and status code.",
            (*RPC_LABELS, "code"),
        )
        self.rpc_duration = histogram(
            "retrieval_rpc_duration_seconds",
            "Time to answer a gRPC call, by service and method.",
            RPC_LABELS,
            buckets=LATENCY_BUCKETS_S,
        )
        self.rpc_in_flight = gauge(
            "retrieval_rpc_in_flight",
            "gRPC calls being answered now, by service and method.",
            RPC_LABELS,
        )
        self.rpc_refused = counter(
            "retrieval_rpc_refused",
            "gRPC calls refused at once because RETRIEVAL_GRPC_MAX_IN_FLIGHT were in flight, "
            "by service and method.",
            RPC_LABELS,
        )
        self.operations = counter(
            "retrieval_operations",
            "Service calls (in process and over gRPC), by operation and outcome.",
            ["operation", "outcome"],
        )
        self.errors = counter(
            "retrieval_errors",
            "Service calls that raised, by operation and error type.",
            ["operation", "error"],
        )
        self.stage_duration = histogram(
            "retrieval_stage_duration_seconds",
            "Time spent in each retrieval stage and in each search inside it.",
            ["stage"],
            buckets=LATENCY_BUCKETS_S,
        )
        self.matches = histogram(
            "retrieval_matches",
            "Matches a retrieval returned.",
            buckets=MATCH_BUCKETS,
        )
        self.top_cosine = histogram(
            "retrieval_top_cosine",
            "Cosine similarity of the best match of a retrieval that returned any.",
            buckets=SCORE_BUCKETS,
        )
        self.cache_lookups = counter(
            "retrieval_result_cache_lookups",
            "Retrievals answered from the result cache (hit) or computed (miss).",
            LOOKUP_LABELS,
        )
        self.query_vector_cache_lookups = counter(
            "retrieval_query_vector_cache_lookups",
            "Query vectors taken from this process's cache (hit) or embedded (miss).",
            LOOKUP_LABELS,
        )
        self.chunk_cache_lookups = counter(
            "retrieval_chunk_cache_lookups",
            "Chunk texts taken from this process's cache (hit) or read from MongoDB (miss).",
            LOOKUP_LABELS,
        )
        self.store_up = gauge(
            "retrieval_store_up",
            "1 while every store answered the last health probe, else 0.",
        )

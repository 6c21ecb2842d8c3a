"""Hypothesis against every public input of the service (``retrieval bench fuzz``).

Each module is one target: retrieval requests in process, metadata filters, documents to
ingest, files to ingest, gRPC requests over loopback, settings from the environment.
"""

from retrieval_testkit.fuzz import documents, files, filters, grpc_requests, retrieve, settings
from retrieval_testkit.fuzz.harness import FuzzReport, Target, TargetReport, run_targets

TARGETS: dict[str, Target] = {
    module.TARGET.name: module.TARGET
    for module in (retrieve, filters, documents, files, grpc_requests, settings)
}

__all__ = ["TARGETS", "FuzzReport", "Target", "TargetReport", "run_targets"]

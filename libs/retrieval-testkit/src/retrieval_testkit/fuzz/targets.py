"""Every fuzz target by name, in the order a run takes them."""

from __future__ import annotations

from retrieval_testkit.fuzz import documents, files, filters, grpc_requests, retrieve, settings
from retrieval_testkit.fuzz.harness import Target

TARGETS: dict[str, Target] = {
    module.TARGET.name: module.TARGET
    for module in (retrieve, filters, documents, files, grpc_requests, settings)
}

"""Hypothesis against every public input of the service (``retrieval bench fuzz``).

Each target module fuzzes one input: retrieval requests in process (``retrieve``), metadata
filters (``filters``), documents to ingest (``documents``), files to ingest (``files``), gRPC
requests over loopback (``grpc_requests``), settings from the environment (``settings``).
"""

from retrieval_testkit.fuzz.harness import FuzzReport, Target, TargetReport
from retrieval_testkit.fuzz.runs import fuzz
from retrieval_testkit.fuzz.targets import TARGETS

__all__ = ["TARGETS", "FuzzReport", "Target", "TargetReport", "fuzz"]

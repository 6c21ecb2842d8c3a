"""``retrieval serve``: the gRPC API until SIGTERM or SIGINT."""

from __future__ import annotations

from retrieval.cli.runtime import run_with_application
from retrieval.container import Application
from retrieval.grpc.server import serve as serve_grpc
from retrieval.grpc.server import stop_on_signals
from retrieval.grpc.settings import GrpcSettings


def serve() -> None:
    """Serve retrieval.v1.RetrievalService over gRPC (settings: RETRIEVAL_GRPC_*).

    On SIGTERM or SIGINT: refuse new calls, let in-flight ones finish within the grace period,
    then close the stores.
    """
    settings = GrpcSettings()

    async def work(app: Application) -> None:
        with stop_on_signals() as stop:
            await serve_grpc(app, settings, stop)

    run_with_application(work)

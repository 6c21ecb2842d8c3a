"""The console served over HTTP by uvicorn, on the services of a running application."""

from __future__ import annotations

from pathlib import Path

import uvicorn

from retrieval.console.access import check_exposure
from retrieval.console.app import console_app
from retrieval.grpc.access import load_tenants
from retrieval.grpc.server import stop_on_signals
from retrieval.grpc.settings import GrpcSettings
from retrieval.lifecycle import running
from retrieval.settings import Settings


async def serve(settings: Settings, host: str, port: int, reports: Path) -> None:
    """Serve the console on ``host:port`` until SIGINT or SIGTERM, then close the stores.

    Refuses (``ConfigurationError``) a host beyond loopback unless tokens are configured,
    before any store starts."""
    tenants = load_tenants(GrpcSettings())
    check_exposure(host, tenants)
    async with running(settings) as application:
        app = console_app(application, tenants, reports)
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, lifespan="off"))
        # uvicorn stops on the signal and raises it again once stopped; the loop's handlers
        # take that one, so the stores close without the run being interrupted.
        with stop_on_signals():
            await server.serve()

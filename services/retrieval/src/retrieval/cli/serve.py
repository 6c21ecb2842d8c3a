"""``retrieval serve``: the gRPC API until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import typer

from retrieval.cli.environment import REFUSED, from_environment
from retrieval.cli.runtime import console, failed, load_settings, run

if TYPE_CHECKING:
    from retrieval.domain.tenants import Tenants
    from retrieval.grpc.settings import GrpcSettings
    from retrieval.lifecycle import Application
    from retrieval.settings import Settings

WORKERS_WAIT_S = 1.0
"""How long the process waits, once the stores are closed, for worker threads still running."""


def serve() -> None:
    """Serve retrieval.v1.RetrievalService over gRPC (settings: RETRIEVAL_GRPC_*), and MCP
    over streamable HTTP beside it when RETRIEVAL_MCP_PORT is set (docs/agents.md).

    A server the command line started on the data directory (``retrieval.cli.warm``) is
    stopped first. On SIGTERM or SIGINT, or after RETRIEVAL_IDLE_STOP_S without a call when it
    is set: refuse new calls, let in-flight ones finish within the grace period,
    then close the stores and exit, without waiting for a model call cut short. Logs at
    RETRIEVAL_LOG_LEVEL, as JSON lines off a terminal.
    """
    from retrieval.cli.warm import stop_started_server
    from retrieval.logging import configure_logging
    from retrieval.settings import Settings

    settings = from_environment(Settings)
    configure_logging(settings.log_level, settings.log_format)
    stop_started_server(settings.data_dir)
    # the server and the stores load once the settings are known to be good
    from retrieval.grpc.server import serve as serve_grpc
    from retrieval.grpc.server import stop_on_signals
    from retrieval.grpc.settings import GrpcSettings
    from retrieval.lifecycle import running

    server_settings = from_environment(GrpcSettings)
    refused_when_taken(server_settings.host, server_settings.port, "RETRIEVAL_GRPC_PORT")
    if settings.mcp_port is not None:
        refused_when_taken(settings.mcp_host, settings.mcp_port, "RETRIEVAL_MCP_PORT")

    async def main() -> None:
        mcp_tenants = mcp_tenants_of(settings, server_settings)
        workers = ThreadPoolExecutor(thread_name_prefix="worker")
        asyncio.get_running_loop().set_default_executor(workers)
        async with running(settings) as app:
            with stop_on_signals() as stop:
                try:
                    async with asyncio.TaskGroup() as doors:
                        doors.create_task(serve_grpc(app, server_settings, stop))
                        if mcp_tenants is not None:
                            doors.create_task(serve_mcp(app, mcp_tenants, stop))
                except ExceptionGroup as failed_doors:
                    # the door that failed first stopped the others: its error is the command's
                    raise failed_doors.exceptions[0] from None
        await exit_past_abandoned_work(workers, WORKERS_WAIT_S)

    run(main())


def stop() -> None:
    """Stop the server that serves the data directory, one the command line started or a
    `retrieval serve`, once it has finished the calls it is answering."""
    from retrieval.cli.warm import stop_server
    from retrieval.grpc.serving_record import serving_record

    data_dir = load_settings().data_dir
    record = serving_record(data_dir)
    if record is None:
        console.print(f"no server serves {data_dir}")
    elif stop_server(record):
        console.print(f"stopped the server at {record.address} (pid {record.pid})")
    else:
        failed(f"the server at {record.address} (pid {record.pid}) has not stopped yet")


def refused_when_taken(host: str, port: int, setting: str) -> None:
    """End the command before the stores start when another process listens on ``host:port``:
    ``error: SETTING: ...`` on stderr, exit code 2, as for any setting that cannot be used."""
    if port == 0:
        return
    family, kind, protocol, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    with socket.socket(family, kind, protocol) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            typer.echo(
                f"error: {setting}: cannot listen on {host}:{port} ({error.strerror}); "
                "choose a free port, or 0 for any",
                err=True,
            )
            raise typer.Exit(code=REFUSED) from None


def mcp_tenants_of(settings: Settings, server_settings: GrpcSettings) -> Tenants | None:
    """The tokens MCP over HTTP takes, when RETRIEVAL_MCP_PORT asks for it; refused before
    the stores start when no token is configured."""
    if settings.mcp_port is None:
        return None
    from retrieval.grpc.access import load_tenants
    from retrieval.mcp.transports import required_tenants

    return required_tenants(load_tenants(server_settings))


async def serve_mcp(app: Application, tenants: Tenants, stop: asyncio.Event) -> None:
    from retrieval.mcp.transports import serve_http

    settings = app.settings
    assert settings.mcp_port is not None
    await serve_http(app, tenants, settings.mcp_host, settings.mcp_port, stop)


async def exit_past_abandoned_work(workers: ThreadPoolExecutor, wait_s: float) -> None:
    """Shut ``workers`` down; should one still be busy after ``wait_s``, end the process at once.

    Called once the stores are closed: what still runs in a worker then is a call whose caller
    was cancelled, a model call that no thread can interrupt (a batch of long passages takes
    tens of seconds on a busy machine). Nobody waits for its result, so exiting now, as the
    SIGKILL at the end of Kubernetes' grace period would, loses nothing.
    """
    import structlog

    loop = asyncio.get_running_loop()
    idle = loop.create_future()

    def shut_down() -> None:
        workers.shutdown(wait=True, cancel_futures=True)
        loop.call_soon_threadsafe(lambda: idle.done() or idle.set_result(None))

    threading.Thread(target=shut_down, name="worker-shutdown", daemon=True).start()
    try:
        await asyncio.wait_for(idle, wait_s)
    except TimeoutError:
        structlog.get_logger("serve").warning("serve.abandoned_work", waited_s=wait_s)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

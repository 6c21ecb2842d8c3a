"""The MCP server over stdio for the local user, and over streamable HTTP (``/mcp``) for the
holders of tenant tokens, on its own or beside the gRPC server of ``retrieval serve``."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager, nullcontext

import structlog
import uvicorn
from mcp.server.auth.settings import AuthSettings

from retrieval.domain.tenants import Tenants
from retrieval.errors import ConfigurationError
from retrieval.lifecycle import Application
from retrieval.mcp.access import LocalAccess, TenantTokenVerifier, TokenAccess
from retrieval.mcp.response_modes import ByProgress
from retrieval.mcp.server import mcp_server

MCP_PATH = "/mcp"
log = structlog.get_logger("mcp")


async def serve_stdio(application: Application, allow_writes: bool) -> None:
    """Answer the MCP client on stdin and stdout until it closes them."""
    access = LocalAccess(application.settings.mcp_namespaces, allow_writes)
    await mcp_server(application, access).run_stdio_async()


def required_tenants(tenants: Tenants | None) -> Tenants:
    """``tenants``, or ``ConfigurationError``: over HTTP every call carries a token."""
    if tenants is None:
        raise ConfigurationError(
            "MCP over HTTP takes the tenant tokens of the gRPC server: set "
            "RETRIEVAL_GRPC_TOKENS_FILE or RETRIEVAL_GRPC_AUTH_TOKEN (stdio needs none: "
            "`retrieval mcp`)"
        )
    return tenants


def http_app(application: Application, tenants: Tenants, host: str, port: int) -> ByProgress:
    """The streamable HTTP app served at ``http://host:port/mcp``: JSON responses where no
    progress is asked for, event streams otherwise."""
    server = mcp_server(
        application,
        TokenAccess(tenants),
        token_verifier=TenantTokenVerifier(tenants),
        auth=AuthSettings(issuer_url=f"http://{host}:{port}", resource_server_url=None),
    )
    return ByProgress(
        streamed=server.streamable_http_app(streamable_http_path=MCP_PATH, host=host),
        plain=server.streamable_http_app(
            streamable_http_path=MCP_PATH, host=host, json_response=True
        ),
    )


class QuietServer(uvicorn.Server):
    """Leaves the signals to the caller, who stops it by ``should_exit``."""

    def capture_signals(self) -> nullcontext[None]:  # type: ignore[override]
        return nullcontext()


def quiet_server(app: ByProgress) -> QuietServer:
    """uvicorn serving ``app``, its requests parsed by httptools (C), not by h11 (Python)."""
    config = uvicorn.Config(
        app, http="httptools", lifespan="on", log_level="warning", access_log=False
    )
    return QuietServer(config)


@contextmanager
def bound(host: str, port: int) -> Iterator[socket.socket]:
    """A listening TCP socket on ``host:port`` (0: a free port); ``ConfigurationError`` when
    it cannot be bound."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Inherited by each connection: the end of a reply's event stream goes out at once,
        # not after the client's delayed acknowledgement (about 40 ms a call).
        listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            listener.bind((host.strip("[]"), port))
        except OSError as error:
            raise ConfigurationError(f"MCP cannot listen on {host}:{port}: {error}") from error
        listener.listen(128)
        yield listener
    finally:
        listener.close()


@asynccontextmanager
async def http_served(
    application: Application, tenants: Tenants, host: str, port: int
) -> AsyncIterator[int]:
    """MCP served at ``http://host:port/mcp`` until the exit; yields the bound port."""
    with bound(host, port) as listener:
        bound_port = listener.getsockname()[1]
        app = http_app(application, tenants, host, bound_port)
        server = quiet_server(app)
        serving = asyncio.create_task(server.serve(sockets=[listener]))
        try:
            yield bound_port
        finally:
            server.should_exit = True
            await serving


async def serve_http(
    application: Application, tenants: Tenants, host: str, port: int, stop: asyncio.Event
) -> None:
    """Serve MCP at ``http://host:port/mcp`` until ``stop`` is set; logs ``mcp.serving`` with
    the bound port."""
    async with http_served(application, tenants, host, port) as bound_port:
        log.info("mcp.serving", host=host, port=bound_port, path=MCP_PATH)
        await stop.wait()

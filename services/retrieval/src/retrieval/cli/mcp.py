"""``retrieval mcp``: the knowledge base as MCP tools, over stdio for the agent that starts
it, or over streamable HTTP for the holders of tenant tokens."""

from __future__ import annotations

import typer

from retrieval.cli.environment import REFUSED

DEFAULT_HTTP_PORT = 8000


def mcp(
    http: bool = typer.Option(
        False,
        "--http",
        help="Serve streamable HTTP at /mcp instead of stdio; every call then needs a tenant "
        "token (RETRIEVAL_GRPC_TOKENS_FILE or RETRIEVAL_GRPC_AUTH_TOKEN).",
    ),
    host: str | None = typer.Option(
        None, help="Interface for --http; default RETRIEVAL_MCP_HOST (127.0.0.1)."
    ),
    port: int | None = typer.Option(
        None,
        help=f"Port for --http; default RETRIEVAL_MCP_PORT, else {DEFAULT_HTTP_PORT}; 0 picks "
        "a free one.",
    ),
    allow_writes: bool = typer.Option(
        False,
        "--allow-writes",
        help="stdio: offer add_documents and delete_documents (over HTTP, a token's write "
        "scope does).",
    ),
) -> None:
    """Serve the Model Context Protocol: the tools search, ask, list_documents and
    read_document (and the write tools, when allowed), and each document as a resource
    retrieval://NAMESPACE/documents/ID. Over stdio (the default) it answers the agent that
    started it, limited to RETRIEVAL_MCP_NAMESPACES when set."""
    if http and allow_writes:
        typer.echo(
            "error: --allow-writes is for stdio; over HTTP a token's write scope allows writes",
            err=True,
        )
        raise typer.Exit(code=REFUSED)
    # the SDK and the stores load only when the server starts
    if http:
        serve_over_http(host, port)
    else:
        from retrieval.cli.runtime import load_settings, run_with_application
        from retrieval.mcp.transports import serve_stdio

        run_with_application(lambda app: serve_stdio(app, allow_writes), load_settings())


def serve_over_http(host: str | None, port: int | None) -> None:
    from retrieval.cli.environment import from_environment
    from retrieval.cli.runtime import run
    from retrieval.grpc.access import load_tenants
    from retrieval.grpc.server import stop_on_signals
    from retrieval.grpc.settings import GrpcSettings
    from retrieval.lifecycle import running
    from retrieval.logging import configure_logging
    from retrieval.mcp.transports import required_tenants
    from retrieval.mcp.transports import serve_http as serve_mcp
    from retrieval.settings import Settings

    settings = from_environment(Settings)
    configure_logging(settings.log_level, settings.log_format)
    grpc_settings = from_environment(GrpcSettings)
    if port is None:
        port = DEFAULT_HTTP_PORT if settings.mcp_port is None else settings.mcp_port

    async def main() -> None:
        tenants = required_tenants(load_tenants(grpc_settings))
        async with running(settings) as app:
            with stop_on_signals() as stop:
                await serve_mcp(app, tenants, host or settings.mcp_host, port, stop)

    run(main())

"""``retrieval console``: browse namespaces, documents and reports, and query, in a browser."""

from __future__ import annotations

from pathlib import Path

import typer


def console(
    host: str = typer.Option(
        "127.0.0.1",
        help="Interface to listen on; one other than loopback needs tenant tokens "
        "(RETRIEVAL_GRPC_TOKENS_FILE or RETRIEVAL_GRPC_AUTH_TOKEN).",
    ),
    port: int = typer.Option(8080, help="Port to listen on; 0 picks a free one."),
    reports: Path = typer.Option(
        Path("reports"), help="Where the benchmarks and golden runs wrote their reports."
    ),
) -> None:
    """Serve the web console until Ctrl-C: namespaces and their health, documents and their
    chunks, queries with every option, and the latest reports."""
    # the web stack loads only when the console starts, never for another command
    from retrieval.cli.runtime import load_settings, run
    from retrieval.cli.warm import stop_started_server
    from retrieval.console.server import serve

    settings = load_settings()
    stop_started_server(settings.data_dir)
    run(serve(settings, host, port, reports))

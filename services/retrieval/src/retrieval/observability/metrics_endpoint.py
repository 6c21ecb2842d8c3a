"""The Prometheus exposition endpoint, served from a thread of its own."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import CollectorRegistry, start_http_server


@contextmanager
def metrics_endpoint(registry: CollectorRegistry, host: str, port: int) -> Iterator[int]:
    """Serve ``registry`` at ``http://host:port/metrics`` until exit; yields the bound port."""
    server, thread = start_http_server(port, addr=host, registry=registry)
    try:
        yield server.server_port
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

"""A TCP proxy on a loopback port that can go down: connections to a backend refused.

Point a client at :attr:`OutageProxy.url` instead of the backend's. :meth:`OutageProxy.down`
closes the port and cuts the connections open through it, so the client meets refused
connections, as when the backend's host is unreachable; :meth:`OutageProxy.up` listens on the
same port again. It runs on the event loop that starts it.
"""

from __future__ import annotations

import asyncio
from contextlib import suppress
from urllib.parse import urlsplit

CHUNK = 64 * 1024


class OutageProxy:
    def __init__(self, upstream_url: str, host: str = "127.0.0.1") -> None:
        upstream = urlsplit(upstream_url)
        if upstream.hostname is None or upstream.port is None:
            raise ValueError(f"{upstream_url!r} names no host and port")
        self._upstream = (upstream.hostname, upstream.port)
        self._scheme = upstream.scheme
        self._host = host
        self._port = 0
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"{self._scheme}://{self._host}:{self._port}"

    async def up(self) -> None:
        """Listen (on the port it had, once it had one)."""
        self._server = await asyncio.start_server(self._forward, self._host, self._port)
        self._port = self._server.sockets[0].getsockname()[1]

    async def down(self) -> None:
        """Refuse connections, and cut those open."""
        assert self._server is not None, "the proxy is not up"
        self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> OutageProxy:
        await self.up()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._server is not None:
            await self.down()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            backend_reader, backend_writer = await asyncio.open_connection(*self._upstream)
        except OSError:
            writer.transport.abort()
            return
        self._open |= {writer, backend_writer}
        try:
            await asyncio.gather(
                pipe(reader, backend_writer), pipe(backend_reader, writer), return_exceptions=True
            )
        finally:
            self._open -= {writer, backend_writer}
            for end in (writer, backend_writer):
                end.transport.abort()


async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy ``source`` to ``sink`` until it ends; then end ``sink``'s writing side."""
    while data := await source.read(CHUNK):
        sink.write(data)
        await sink.drain()
    with suppress(OSError):
        sink.write_eof()

"""needledb, an independent Pinecone emulator (FastAPI and FAISS, from PyPI), as a child
process: what our own stand-in might let pass, it catches. It speaks Pinecone's data plane
under ``/indexes/<name>``; it has no inference, no sparse index and no lag."""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from retrieval.adapters.pinecone.clients import PineconeConnection

CLI = Path(sys.executable).with_name("needledb")
START_S = 60.0


@dataclass(frozen=True)
class NeedleDb:
    url: str
    api_key: str

    def create_index(self, name: str, dimension: int) -> str:
        """A new cosine index; returns its data-plane host."""
        response = httpx.post(
            f"{self.url}/indexes",
            json={"name": name, "dimension": dimension, "metric": "cosine"},
            headers={"Api-Key": self.api_key},
            timeout=30.0,
        )
        response.raise_for_status()
        return f"{self.url}/indexes/{name}"

    def connection(self, index_host: str) -> PineconeConnection:
        return PineconeConnection(api_key=self.api_key, index_host=index_host)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def needledb_server(data_dir: Path) -> Iterator[NeedleDb]:
    """``needledb serve`` on a free loopback port over ``data_dir``, once it answers."""
    api_key = secrets.token_hex(16)
    port = free_port()
    process = subprocess.Popen(
        [str(CLI), "serve", "--data", str(data_dir), "--host", "127.0.0.1", "--port", str(port)],
        env=os.environ | {"NEEDLEDB_API_KEY": api_key},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        while not answers(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"needledb did not start (exit code {process.poll()})")
            time.sleep(0.1)
        yield NeedleDb(url, api_key)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=1.0).status_code == 200
    except httpx.TransportError:
        return False

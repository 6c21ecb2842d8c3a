"""Where a running ``retrieval serve`` listens, written beside the data directory's stores, so
that a command run on the same data directory sends its request there instead of stopping
because the directory is held."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from retrieval.adapters.data_directory.lock import alive

RECORD_FILE = "serving.json"
ANY_ADDRESS = {"", "0.0.0.0", "::", "[::]"}


@dataclass(frozen=True)
class ServingRecord:
    address: str
    """``host:port`` to connect to from this host."""
    pid: int
    tls: bool
    auth: bool


def local_address(host: str, port: int) -> str:
    """The address a process of this host reaches a server bound to ``host:port`` at."""
    return f"127.0.0.1:{port}" if host in ANY_ADDRESS else f"{host}:{port}"


@contextmanager
def recorded(data_dir: Path, record: ServingRecord) -> Iterator[None]:
    """``record`` in ``data_dir`` while the server serves, written whole (a reader never
    sees half of it) and removed afterwards."""
    data_dir.mkdir(parents=True, exist_ok=True)
    target = data_dir / RECORD_FILE
    written = target.with_suffix(f".{os.getpid()}.tmp")
    written.write_text(json.dumps(asdict(record)))
    written.replace(target)
    try:
        yield
    finally:
        if serving_record(data_dir) == record:
            target.unlink(missing_ok=True)


def serving_record(data_dir: Path) -> ServingRecord | None:
    """The record of the server that serves ``data_dir`` now; None when there is none, or its
    process has ended (killed before it could remove its record)."""
    try:
        record = ServingRecord(**json.loads((data_dir / RECORD_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None
    return record if running(record.pid) else None


def running(pid: int) -> bool:
    return pid != os.getpid() and alive(pid)

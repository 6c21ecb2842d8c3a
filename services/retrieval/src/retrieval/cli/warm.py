"""A server the command line starts for a data directory, and leaves warm.

When no server serves the data directory, a command that can be sent to one starts
``retrieval serve`` in the background (its own session, loopback, a free port), waits until it
records where it listens (``retrieval.grpc.serving_record``: written once its stores answer),
and sends its calls there; the next commands find it and start nothing. It stops by itself
after ``RETRIEVAL_IDLE_STOP_S`` without a call (15 minutes when unset), on ``retrieval stop``,
or when a command that must hold the data directory itself starts. ``RETRIEVAL_WARM_SERVER=0``
turns it off.

Beside the serving record, in the data directory: ``warm-server.lock``, held while a command
starts a server, so that commands run at once start one; ``warm-server.json``, the pid of the
server the command line started and a digest of the settings it started with (a command run
with other settings stops it and starts another); ``warm-server.log``, its log.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import SecretStr

from retrieval.adapters.data_directory.lock import alive
from retrieval.grpc.serving_record import ServingRecord, serving_record

if TYPE_CHECKING:
    from retrieval.settings import Settings

START_LOCK = "warm-server.lock"
STARTED = "warm-server.json"
LOG = "warm-server.log"
IDLE_STOP_S = 900.0
"""How long a server the command line started stays without a call, unless
RETRIEVAL_IDLE_STOP_S says otherwise."""
START_S = 120.0
"""Loading the model and starting the embedded MongoDB take a while on a loaded machine."""
STOP_S = 60.0
"""A stopping server lets its calls finish (RETRIEVAL_GRPC_GRACE_SECONDS), then closes the
stores."""
POLL_S = 0.05
SERVER_ONLY = ("RETRIEVAL_GRPC_", "RETRIEVAL_MCP_PORT", "RETRIEVAL_METRICS_PORT")
"""Settings of a server someone runs, not of one serving this user's commands on loopback."""


def served_by(settings: Settings) -> ServingRecord | None:
    """The server a command on ``settings.data_dir`` sends its calls to: the one serving it,
    else, with ``RETRIEVAL_WARM_SERVER`` on, one started now. None: the command runs in its
    own process (a server that could not start left its reason in ``warm-server.log``, and the
    command meets the same one)."""
    data_dir = settings.data_dir
    record = serving_record(data_dir)
    digest = settings_digest(settings)
    if not settings.warm_server or (record is not None and started_alike(record, data_dir, digest)):
        return record
    with start_lock(data_dir):
        record = serving_record(data_dir)
        if record is not None and started_alike(record, data_dir, digest):
            return record
        if record is not None:
            stop_server(record)
        return start(settings, digest)


def started_alike(record: ServingRecord, data_dir: Path, digest: str) -> bool:
    """Whether the server of ``record`` may take the calls of a command with the settings of
    ``digest``: one the command line started with the same settings, or one it did not start
    (its settings are its owner's)."""
    started = started_server(data_dir)
    return started is None or started["pid"] != record.pid or started["settings"] == digest


def start(settings: Settings, digest: str) -> ServingRecord | None:
    """Start ``retrieval serve`` for ``settings.data_dir`` detached from this process, and
    return its record once it serves; None when it ends or takes longer than ``START_S``."""
    data_dir = settings.data_dir
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith(SERVER_ONLY)
    } | {
        "RETRIEVAL_DATA_DIR": str(data_dir.resolve()),
        "RETRIEVAL_GRPC_HOST": "127.0.0.1",
        "RETRIEVAL_GRPC_PORT": "0",
        "RETRIEVAL_IDLE_STOP_S": str(settings.idle_stop_s or IDLE_STOP_S),
    }
    command = Path(sys.executable).with_name("retrieval")
    log_flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
    pid = os.posix_spawn(
        command,
        [str(command), "serve"],
        environment,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(data_dir / LOG), log_flags, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
        setsid=True,
    )
    (data_dir / STARTED).write_text(json.dumps({"pid": pid, "settings": digest}))
    deadline = time.monotonic() + START_S
    while (record := serving_record(data_dir)) is None or record.pid != pid:
        ended = os.waitpid(pid, os.WNOHANG) != (0, 0)
        if ended or time.monotonic() > deadline:
            if not ended:
                os.kill(pid, signal.SIGKILL)
            typer.echo(
                f"warning: the server for {data_dir} did not start ({data_dir / LOG}); "
                "running here",
                err=True,
            )
            return None
        time.sleep(POLL_S)
    return record


def stop_server(record: ServingRecord) -> bool:
    """Ask the server of ``record`` to stop (SIGTERM) and wait, for up to ``STOP_S``, until it
    has ended and so released the data directory; whether it has."""
    with suppress(ProcessLookupError):
        os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_S
    while alive(record.pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_S)
    return True


def stop_started_server(data_dir: Path) -> None:
    """Stop the server the command line started for ``data_dir``, if it serves it: a command
    about to hold the directory itself (backup, reconcile, serve) needs it free. A server
    someone started with ``retrieval serve`` is left serving."""
    record = serving_record(data_dir)
    started = started_server(data_dir)
    if record is not None and started is not None and started["pid"] == record.pid:
        stop_server(record)


def started_server(data_dir: Path) -> dict[str, Any] | None:
    """The pid and settings digest of the last server the command line started there."""
    try:
        return json.loads((data_dir / STARTED).read_text())
    except (OSError, ValueError):
        return None


def settings_digest(settings: Settings) -> str:
    """A digest of every setting, secrets included (their values are never written), the data
    directory however it is spelt."""

    def revealed(value: object) -> object:
        return value.get_secret_value() if isinstance(value, SecretStr) else str(value)

    fields = settings.model_dump() | {"data_dir": settings.data_dir.resolve()}
    dumped = json.dumps(fields, default=revealed, sort_keys=True)
    return hashlib.sha256(dumped.encode()).hexdigest()


@contextmanager
def start_lock(data_dir: Path) -> Iterator[None]:
    """Held while one command looks for a server and starts one; others wait their turn."""
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(data_dir / START_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)

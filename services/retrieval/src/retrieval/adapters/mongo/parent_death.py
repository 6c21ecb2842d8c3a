"""Runs a command that Linux kills (SIGKILL) when the thread that started this process ends.

    python -I -S parent_death.py PARENT_PID COMMAND [ARGUMENT ...]

The embedded server is started through this script rather than with a ``preexec_fn``: Python
code run between ``fork`` and ``exec`` in a process with other threads (gRPC's, the event
loop's) can crash the parent or the child, and a ``preexec_fn`` rules out ``vfork``. Here the
request is made by a fresh interpreter, which the command then replaces: the request survives
``execve``. It imports only the standard library, so it runs isolated and without ``site``.

The signal is SIGKILL, not SIGTERM: a parent that dies while it is stopping its server (SIGTERM
sent, the server's handler under way) would otherwise send a second SIGTERM into that handler,
which the embedded server does not survive (it deadlocks, holding the data directory). Killed,
the server is like one that crashed: its journal brings back every acknowledged write.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
PARENT_GONE = 1


def main(arguments: list[str]) -> None:
    """The command replaces this process; it exits with ``PARENT_GONE`` if the parent died
    before the request took effect."""
    parent, command = int(arguments[0]), arguments[1:]
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = (ctypes.c_int, ctypes.c_ulong)
    if prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        sys.exit(PARENT_GONE)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Where libraries' logging goes: agentcli's debug log, never the user's terminal unless asked.

Python prints a library's warnings and errors on stderr when nobody has set logging up (the
`mcp` SDK's tracebacks for a server that writes to stdout, asyncio's "Task exception was never
retrieved", an HTTP library's retries). `route_logging` gives the root logger one handler
instead: the file `$AGENTCLI_HOME/debug.log`, private to the user (0600), created at its first
record and moved to `debug.log.1` once it passes 1 MB, so a noisy server cannot fill the disk.
With `--verbose` the records go to stderr as well. Python's warnings (`warnings.warn`) are
logged the same way, and agentcli's own records (`agentcli.*`) from INFO up.

A record that cannot be written (a read-only home) is dropped without a word: logging must never
be what breaks a run or prints on the terminal.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from pathlib import Path
from typing import TextIO

LOG_FILE = "debug.log"
MAX_BYTES = 1 << 20
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class _DebugLog(logging.FileHandler):
    """`debug.log`, opened 0600 at the first record and moved aside when it grows past MAX_BYTES."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True, errors="backslashreplace")

    def _open(self) -> io.TextIOWrapper:
        path = Path(self.baseFilename)
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        return open(descriptor, "a", encoding="utf-8", errors="backslashreplace")

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        if self.stream is not None and self.stream.tell() > MAX_BYTES:
            self.close()  # the next record opens it again, moving this one aside

    def handleError(self, record: logging.LogRecord) -> None:
        pass


class _Quiet(logging.StreamHandler[TextIO]):
    def handleError(self, record: logging.LogRecord) -> None:
        pass


def route_logging(home: Path, *, verbose: bool = False) -> None:
    """Send every logger's records to `home/debug.log` (and stderr with `verbose`) from now on,
    replacing what an earlier call set up."""
    root = logging.getLogger()
    for earlier in [h for h in root.handlers if isinstance(h, (_DebugLog, _Quiet))]:
        root.removeHandler(earlier)
        earlier.close()
    handlers: list[logging.Handler] = [_DebugLog(home / LOG_FILE)]
    if verbose:
        handlers.append(_Quiet(sys.stderr))
    for handler in handlers:
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)
    logging.getLogger("agentcli").setLevel(logging.INFO)
    logging.captureWarnings(True)

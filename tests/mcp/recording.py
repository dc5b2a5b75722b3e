"""Stand-ins for a hostile repository's MCP servers that only write down what they were given.

`RECORDER` is a program started as a stdio server (`python recorder.py OUT ARGS...`): it writes
its arguments and environment to OUT as JSON and exits. `RecordingHttp` is an HTTP server on
127.0.0.1 that keeps the path (with its query) and headers of every request and answers 404.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any

RECORDER_SOURCE = """
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump({"argv": sys.argv[2:], "env": dict(os.environ)}, out)
"""


def recorder(folder: Path, out: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The `mcpServers` entry of a stdio server that records `args` and its environment in `out`."""
    script = folder / "recorder.py"
    script.write_text(RECORDER_SOURCE)
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(script), str(out), *args]}
    if env is not None:
        entry["env"] = env
    return entry


def recorded(out: Path) -> dict[str, Any]:
    """What the recorder was given: {"argv": [...], "env": {...}}."""
    data: dict[str, Any] = json.loads(out.read_text())
    return data


class RecordingHttp:
    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        """(path with query, headers) of each request."""
        seen = self.requests

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                seen.append((self.path, dict(self.headers.items())))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _record

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingHttp:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

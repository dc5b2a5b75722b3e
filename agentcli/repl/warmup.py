"""What the first turn needs and the prompt does not, imported in the background once the
prompt is on screen (`start_warm_up`), so it is ready by the time the user presses Enter.

`WARM_UP` is the one list of them. Everything the REPL shows before its prompt is imported
the ordinary way; a module that only a turn uses is imported where it is used (so the prompt
does not wait for it) and named here (so the first turn does not either).
"""

from __future__ import annotations

import contextlib
import importlib
import threading

WARM_UP = (
    "agentcli.providers.anthropic",  # the provider (already loaded: the session builds its model at once)
    "agentcli.providers.http",  # the HTTP layer it sends requests with (loaded with the provider)
    "httpx2",  # the client that layer imports at its first request
    "agentcli.ui.markdown_stream",  # the streamed answer (markdown-it, rich's Markdown)
)
"""In the order a turn needs them: what sends the request, then what shows the answer."""


def start_warm_up() -> None:
    """Import `WARM_UP` in a daemon thread (it never delays the exit)."""
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()


def warm_up() -> None:
    for module in WARM_UP:
        with contextlib.suppress(ImportError):  # reported properly where the module is used
            importlib.import_module(module)

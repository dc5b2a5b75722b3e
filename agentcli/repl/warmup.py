"""What the first turn needs and the prompt does not, imported in the background once the
prompt is on screen (`start_warm_up`), so it is ready by the time the user presses Enter.

`warm_up_modules` is the one list of them. Everything the REPL shows before its prompt is
imported the ordinary way; a module that only a turn uses is imported where it is used (so the
prompt does not wait for it) and named here (so the first turn does not either).
"""

from __future__ import annotations

import contextlib
import importlib
import threading

from agentcli.providers import module_of

AFTER_PROVIDER = (
    "agentcli.providers.http",  # the HTTP layer it sends requests with (loaded with the provider)
    "httpx2",  # the client that layer imports at its first request
    "agentcli.ui.markdown_stream",  # the streamed answer (markdown-it, rich's Markdown)
)


def warm_up_modules(provider: str) -> tuple[str, ...]:
    """In the order a turn needs them: the provider's module (the resolver names it), what sends
    the request, then what shows the answer."""
    return (module_of(provider), *AFTER_PROVIDER)


def start_warm_up(provider: str) -> None:
    """Import `warm_up_modules(provider)` in a daemon thread (it never delays the exit)."""
    threading.Thread(target=warm_up, args=(warm_up_modules(provider),), name="warm-up", daemon=True).start()


def warm_up(modules: tuple[str, ...]) -> None:
    for module in modules:
        with contextlib.suppress(ImportError):  # reported properly where the module is used
            importlib.import_module(module)

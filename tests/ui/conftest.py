"""Rendering tests build their own Consoles: keep the caller's terminal settings out of them."""

from __future__ import annotations

import pytest

_TERMINAL_ENV = (
    *("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "LINES", "COLORTERM"),
    # What `terminal_shows_hyperlinks` looks at: the tests' terminals show no hyperlinks.
    *("FORCE_HYPERLINK", "TERM_PROGRAM", "VTE_VERSION", "KONSOLE_VERSION", "KITTY_WINDOW_ID", "WT_SESSION", "TMUX"),
)


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _TERMINAL_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")

"""What logging in to a remote MCP server leaves behind: one file per server URL, for the user only.

    $AGENTCLI_HOME/mcp-auth/                      folder 0700
        <first 32 hex of sha256(url)>.json        file 0600, written whole and atomically:
    {"url": "https://host/mcp",                   the server it belongs to (checked on every read)
     "client": {...},                             the OAuth client registration (RFC 7591 fields)
     "tokens": {...},                             access and refresh token, as the server sent them
     "expires_at": 1767225600.0,                  when the access token runs out (seconds since 1970)
     "authorization_server": {...}}               the metadata its endpoints came from (RFC 8414)

Keyed by the server's URL, not its name: a server renamed keeps its login, and a configuration
that points a name at another URL never gets the old server's tokens. Nothing here imports the
`mcp` SDK: `/mcp` and `agentcli mcp list` read the login state without it. Nothing here prints a
value either: callers show `login_state`, never a record.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from agentcli.mcp.config import ServerConfig
from agentcli.permissions.persist import write_json_atomically
from agentcli.regular_file import read_regular_file

FOLDER = "mcp-auth"
MAX_RECORD_BYTES = 1 << 20
LoginState = Literal["logged in", "expired", "not logged in"]


def canonical_url(url: str) -> str:
    """`url` as tokens are filed under: scheme and host in lower case, no fragment."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


@dataclass(frozen=True)
class AuthStore:
    """The login records of one agentcli home (`$AGENTCLI_HOME/mcp-auth`)."""

    folder: Path

    def path(self, url: str) -> Path:
        digest = hashlib.sha256(canonical_url(url).encode()).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def load(self, url: str) -> dict[str, Any]:
        """The record of `url` ({} when there is none, or it is unreadable or another server's)."""
        try:
            raw = read_regular_file(self.path(url), MAX_RECORD_BYTES)
            record = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(record, dict) or record.get("url") != canonical_url(url):
            return {}
        return record

    def update(self, url: str, **parts: Any) -> None:
        """Set `parts` of `url`'s record (a part set to None is removed), creating it if needed."""
        record = self.load(url)
        record["url"] = canonical_url(url)
        for key, value in parts.items():
            if value is None:
                record.pop(key, None)
            else:
                record[key] = value
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.folder, 0o700)  # one made earlier by something else
        write_json_atomically(self.path(url), record)  # a 0600 file (mkstemp), renamed into place

    def forget(self, url: str) -> bool:
        """Log out of `url`: its record goes (client registration too). False when there was none."""
        try:
            self.path(url).unlink()
        except FileNotFoundError:
            return False
        return True

    def registered_port(self, url: str) -> int:
        """The callback port `url`'s client was registered with (0: none), so a new login can
        listen there and the registration stays valid."""
        client = self.load(url).get("client")
        uris = client.get("redirect_uris") if isinstance(client, dict) else None
        for uri in uris if isinstance(uris, list) else ():
            try:
                port = urlsplit(str(uri)).port
            except ValueError:
                continue
            if port:
                return port
        return 0

    def state(self, url: str, now: float | None = None) -> LoginState:
        """Whether there is a login for `url`. An access token that ran out still counts as logged
        in while a refresh token can renew it (agentcli does when it connects); without one it is
        "expired"."""
        record = self.load(url)
        tokens = record.get("tokens")
        if not isinstance(tokens, dict) or not tokens.get("access_token"):
            return "not logged in"
        expires_at = record.get("expires_at")
        ran_out = isinstance(expires_at, (int, float)) and expires_at <= (time.time() if now is None else now)
        return "expired" if ran_out and not tokens.get("refresh_token") else "logged in"


def login_label(server: ServerConfig, store: AuthStore) -> str:
    """How a server authenticates, for `/mcp` and `mcp list`: its login state (OAuth), "header"
    (its own Authorization header), or "" (a stdio server)."""
    if server.transport == "stdio":
        return ""
    return store.state(server.url) if server.logs_in else "header"


def default_store() -> AuthStore:
    from agentcli.settings import agentcli_home

    return AuthStore(agentcli_home() / FOLDER)

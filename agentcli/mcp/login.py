"""The user's side of logging in to a remote MCP server: the browser, and the way back.

    login = BrowserLogin("github", show=print)     # listens on 127.0.0.1 (a free port, or `port`)
    login.redirect_uri                             # http://127.0.0.1:PORT/callback, registered with the server
    login.present(authorization_url, endpoints)    # prints the address (always), opens the browser if any
    login.wait()                                   # blocks until the browser comes back: the Redirect
    login.paste(address)                           # or the user pastes where it ended (over SSH)
    login.close()

The authorization server sends the browser back to `redirect_uri` with a code and the `state`
agentcli put in the address. Only that state is taken: a redirect with another (a page that
sends the browser to the port with a code of its own) is refused and the wait goes on. The
address is printed whether or not a browser opens, so a user on SSH can open it elsewhere and
paste the address the browser ended on. Nothing here imports the `mcp` SDK; `agentcli.mcp.oauth`
drives this from the SDK's flow.
"""

from __future__ import annotations

import html
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT_S = 300.0
"""How long a login waits for the browser to come back."""
POLL_S = 0.1


class LoginFailed(Exception):
    """The login did not complete; the message says why and what to do."""


class LoginRequired(LoginFailed):
    """The server needs a login, and there is nobody here to do it (`agentcli run`, a background
    connect): the message says how to log in."""


@dataclass(frozen=True)
class Redirect:
    """What the authorization server sent the browser back with."""

    code: str
    state: str
    iss: str | None = None


@dataclass(frozen=True)
class Endpoints:
    """Where a login goes, shown before the browser opens."""

    server: str
    """The MCP server's name."""
    url: str
    """The MCP server's URL."""
    issuer: str = ""
    """The authorization server, as its metadata names itself."""
    token_endpoint: str = ""
    """Where the code (and later the refresh token) is sent."""


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}" + (f":{parts.port}" if parts.port else "")


def describe(endpoints: Endpoints) -> list[str]:
    """Lines about where the login goes; a warning when the token endpoint is on another origin
    than the authorization server (what a hostile server's metadata would do to collect codes)."""
    lines: list[str] = []
    if endpoints.issuer:
        lines.append(f"Authorization server: {endpoints.issuer}")
    if endpoints.token_endpoint:
        lines.append(f"Tokens come from: {endpoints.token_endpoint}")
        expected = origin(endpoints.issuer or endpoints.url)
        if origin(endpoints.token_endpoint) != expected:
            lines.append(
                f"! Warning: the token endpoint {origin(endpoints.token_endpoint)} is not on the authorization "
                f"server's origin ({expected}); the login code and tokens would go there. Press Ctrl-C to stop "
                "unless you expected this."
            )
    return lines


class NoLogin:
    """An authorizer for when nobody can log in: any request for one raises LoginRequired."""

    def __init__(self, how: str, redirect_uri: str = f"http://127.0.0.1{CALLBACK_PATH}") -> None:
        self.how = how
        self.redirect_uri = redirect_uri

    def present(self, authorization_url: str, endpoints: Endpoints) -> None:
        raise LoginRequired(self.how)

    def wait(self) -> Redirect:
        raise LoginRequired(self.how)


class BrowserLogin:
    """One login: a listener for the redirect on 127.0.0.1, the address shown and opened."""

    def __init__(
        self,
        server: str,
        show: Callable[[str], None],
        *,
        port: int = 0,
        open_browser: Callable[[str], bool] | None = None,
        timeout: float = LOGIN_TIMEOUT_S,
    ) -> None:
        """Raises LoginFailed when `port` cannot be listened on."""
        self.server = server
        self.show = show
        self.open_browser = open_browser or open_in_browser
        self.timeout = timeout
        self._expected: str | None = None
        self._came_back: Redirect | None = None
        self._failure: str = ""
        self._done = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        try:
            self._http = HTTPServer(("127.0.0.1", port), _handler(self))
        except OSError as error:
            raise LoginFailed(
                f"cannot listen on 127.0.0.1:{port} for the login's redirect: {error.strerror or error}"
            ) from None
        self._http.timeout = POLL_S
        self._thread = threading.Thread(target=self._serve, name="mcp-login", daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    def present(self, authorization_url: str, endpoints: Endpoints) -> None:
        """Show where the login goes and the address to open, then open it in the browser."""
        self._expected = _query(authorization_url).get("state")
        self._came_back, self._failure = None, ""
        self._done.clear()
        self.show(f'Log in to MCP server "{endpoints.server}" ({endpoints.url}) in your browser:')
        self.show(f"  {authorization_url}")
        for line in describe(endpoints):
            self.show(line)
        opened = self.open_browser(authorization_url)
        self.show(
            ("Opened your browser. " if opened else "Open that address in a browser. ")
            + f"Waiting for it to come back to {self.redirect_uri} (Ctrl-C stops); if it cannot reach this "
            "machine (over SSH), paste the address it ended on here."
        )

    def wait(self) -> Redirect:
        """The redirect that carried our state; raises LoginFailed when the server refused, the
        time ran out or `cancel` was called."""
        if not self._done.wait(self.timeout):
            raise LoginFailed(f"the browser did not come back within {self.timeout:g} s; log in again to retry")
        if self._came_back is None:
            raise LoginFailed(self._failure or "the login was stopped")
        return self._came_back

    def paste(self, text: str) -> str:
        """Take the address the browser ended on, typed or pasted by the user; what to tell them."""
        return self._offer(text.strip()) or "Got it."

    def cancel(self) -> None:
        self._failure = self._failure or "the login was stopped"
        self._done.set()

    def close(self) -> None:
        self.cancel()
        self._closed.set()
        self._thread.join()
        self._http.server_close()

    # ------------------------------------------------------------------ the listener's side

    def _serve(self) -> None:
        while not self._closed.is_set():
            self._http.handle_request()  # returns after `timeout` when nothing came

    def _offer(self, address: str) -> str:
        """Accept `address` as the redirect if it carries our state: "" then, else why not."""
        with self._lock:
            return self._take(_query(address))

    def _take(self, found: dict[str, str]) -> str:
        if self._expected is None:
            return "agentcli is not waiting for a login redirect yet."
        if found.get("state") != self._expected:
            return "This is not the login agentcli is waiting for (its state does not match); it was ignored."
        if "error" in found:
            said = found["error"] + (f": {found['error_description']}" if found.get("error_description") else "")
            self._failure = f"the authorization server refused the login ({said})"
        elif not found.get("code"):
            return "That address carries no code; paste the whole address the browser ended on."
        else:
            self._came_back = Redirect(found["code"], found["state"], found.get("iss"))
        self._done.set()
        return ""


def _query(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items() if values}


def _handler(login: BrowserLogin) -> type[BaseHTTPRequestHandler]:
    class Callback(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if urlsplit(self.path).path != CALLBACK_PATH:
                self._page(404, "Not found", "This is agentcli's login listener; nothing else is here.")
                return
            refused = login._offer(self.path)
            if refused:
                self._page(400, "Not accepted", refused)
            elif login._came_back is not None:
                self._page(200, "Logged in", f"agentcli has the login for {login.server}. You can close this tab.")
            else:
                self._page(200, "Login refused", login._failure)

        def _page(self, status: int, title: str, text: str) -> None:
            body = f"<!doctype html><title>{html.escape(title)}</title><p>{html.escape(text)}</p>".encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the request line carries the code: never logged

    return Callback


def open_in_browser(url: str) -> bool:
    """Open `url` with `webbrowser` where a graphical browser can be (or $BROWSER says which);
    False when none was opened. On Linux without a display nothing is tried: `webbrowser` would
    start a text browser in this terminal."""
    if sys.platform.startswith("linux") and not any(
        os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")
    ):
        return False
    import webbrowser

    try:
        return webbrowser.open(url)
    except Exception:  # webbrowser reports a missing or broken browser in many ways
        return False

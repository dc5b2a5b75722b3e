"""A remote MCP server behind OAuth 2.1, and its authorization server, on two origins of 127.0.0.1.

    with OAuthServers() as servers:
        servers.mcp_url                 # http://127.0.0.1:P1/mcp: the demo's `echo` tool, for a valid bearer token
        servers.issued                  # every token issued (access and refresh), to look for where they leak
        servers.requests                # (origin, method, path, Authorization header) of every request
        servers.expire_access_tokens()  # the access tokens issued so far stop working

The resource server answers 401 with `WWW-Authenticate: Bearer resource_metadata=...` without a
valid token, and serves its protected-resource metadata (RFC 9728). The authorization server
serves its metadata (RFC 8414), registers clients (RFC 7591), authorizes at once (redirecting
to the client's redirect URI with a code and the state it was given, as a user clicking
"allow"), and issues tokens for a code with a matching PKCE verifier or for a refresh token
(rotated). `token_endpoint` overrides where its metadata says tokens come from (a hostile
server's metadata); `token_refusal` makes it refuse with a text of the test's. Real HTTP,
each origin a uvicorn server in a thread.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlencode

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.waiting import CEILING, wait_until

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


@dataclass
class Seen:
    origin: str
    method: str
    path: str
    authorization: str


@dataclass
class OAuthServers:
    expires_in: int = 3600
    token_endpoint: str = ""
    """Where the metadata says tokens come from; empty: the authorization server's own /token."""
    token_refusal: str = ""
    """When set, the token endpoint refuses every request with this text (400, text/plain)."""
    requests: list[Seen] = field(default_factory=list)
    issued: list[str] = field(default_factory=list)
    _access: dict[str, float] = field(default_factory=dict)
    _refresh: set[str] = field(default_factory=set)
    _codes: dict[str, str] = field(default_factory=dict)
    """Code → the PKCE challenge it was issued for."""
    _servers: list[tuple[uvicorn.Server, threading.Thread, socket.socket]] = field(default_factory=list)

    def __enter__(self) -> OAuthServers:
        self.auth_url = self._serve(self._authorization_server())
        mcp = MCPServer("secure")

        @mcp.tool()
        def echo(text: str) -> str:
            """Echo the text back."""
            return f"echo: {text}"

        self.resource_url = self._serve(self._protected(mcp.streamable_http_app()))
        self.mcp_url = f"{self.resource_url}/mcp"
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        for server, thread, sock in self._servers:
            server.should_exit = True
            thread.join(CEILING)
            sock.close()

    def expire_access_tokens(self) -> None:
        for token in self._access:
            self._access[token] = 0.0

    def seen_at(self, origin: str) -> list[Seen]:
        return [seen for seen in self.requests if seen.origin == origin]

    # ------------------------------------------------------------------ serving

    def _serve(self, app: Any) -> str:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
        server = uvicorn.Server(uvicorn.Config(self._recording(app, origin), log_level="warning", access_log=False))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        self._servers.append((server, thread, sock))
        wait_until(lambda: server.started, f"the server at {origin} starting")
        return origin

    def _recording(self, app: Any, origin: str) -> Any:
        async def recorded(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = dict(scope.get("headers") or [])
                authorization = headers.get(b"authorization", b"").decode()
                self.requests.append(Seen(origin, scope["method"], scope["path"], authorization))
            await app(scope, receive, send)

        return recorded

    # ------------------------------------------------------------------ the resource server

    def _protected(self, mcp_app: Any) -> Any:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http":
                await mcp_app(scope, receive, send)
                return
            if scope["path"] == "/.well-known/oauth-protected-resource/mcp":
                metadata = {"resource": self.mcp_url, "authorization_servers": [self.auth_url]}
                await JSONResponse(metadata)(scope, receive, send)
                return
            headers = dict(scope.get("headers") or [])
            token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
            if self._access.get(token, 0.0) <= time.time():
                challenge = f'Bearer resource_metadata="{self.resource_url}/.well-known/oauth-protected-resource/mcp"'
                await Response("unauthorized", 401, {"WWW-Authenticate": challenge})(scope, receive, send)
                return
            await mcp_app(scope, receive, send)

        return app

    # ------------------------------------------------------------------ the authorization server

    def _authorization_server(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/oauth-authorization-server", self._metadata),
                Route("/register", self._register, methods=["POST"]),
                Route("/authorize", self._authorize),
                Route("/token", self._token, methods=["POST"]),
            ]
        )

    async def _metadata(self, request: Request) -> Response:
        return JSONResponse(
            {
                "issuer": self.auth_url,
                "authorization_endpoint": f"{self.auth_url}/authorize",
                "token_endpoint": self.token_endpoint or f"{self.auth_url}/token",
                "registration_endpoint": f"{self.auth_url}/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
            }
        )

    async def _register(self, request: Request) -> Response:
        body = await request.json()
        client = {
            "client_id": f"client-{secrets.token_hex(4)}",
            "redirect_uris": body.get("redirect_uris", []),
            "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"],
        }
        return JSONResponse(client, 201)

    async def _authorize(self, request: Request) -> Response:
        query = request.query_params
        code = secrets.token_urlsafe(16)
        self._codes[code] = query.get("code_challenge", "")
        back = {"code": code, "state": query.get("state", "")}
        return RedirectResponse(f"{query['redirect_uri']}?{urlencode(back)}", 302)

    async def _token(self, request: Request) -> Response:
        if self.token_refusal:
            return Response(self.token_refusal, 400, media_type="text/plain")
        form = {key: values[0] for key, values in parse_qs((await request.body()).decode()).items()}
        grant = form.get("grant_type")
        if grant == "authorization_code":
            challenge = self._codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
            if challenge is None or digest != challenge:
                return JSONResponse({"error": "invalid_grant"}, 400)
        elif grant == "refresh_token" and form.get("refresh_token") in self._refresh:
            self._refresh.discard(form["refresh_token"])
        else:
            return JSONResponse({"error": "invalid_grant"}, 400)
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        self._access[access] = time.time() + self.expires_in
        self._refresh.add(refresh)
        self.issued += [access, refresh]
        tokens = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
        }
        return JSONResponse(tokens)

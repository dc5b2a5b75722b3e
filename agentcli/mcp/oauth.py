"""OAuth 2.1 for remote MCP servers, on the `mcp` SDK's client (`mcp.client.auth.OAuthClientProvider`).

The SDK does the protocol: protected-resource metadata (RFC 9728) and authorization-server
metadata discovery (RFC 8414, OpenID), dynamic client registration (RFC 7591), authorization
code with PKCE (S256), resource indicators (RFC 8707), scope selection and step-up, and
refreshing an access token before it runs out. This module gives it what it leaves to the
application:

- where tokens live: `auth_store` (one 0600 file per server URL), including what the SDK keeps
  only in memory but a later process needs: when the access token runs out (else an expired
  token is sent instead of refreshed) and the authorization server's metadata (else a refresh
  goes to the MCP server's own origin, carrying the refresh token to a host that never issued it);
- who logs in: an `Authorizer` (`login.BrowserLogin`, or `login.NoLogin` when nobody can);
- what the user sees before the browser opens: the authorization server and where tokens come
  from (`login.describe`), so metadata pointing token requests elsewhere is shown.

A server configured with its own `Authorization` header gets none of this. Imported only on the
manager's loop thread, for http and sse servers.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any, Protocol

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
)
from pydantic import ValidationError

from agentcli.mcp.auth_store import AuthStore
from agentcli.mcp.config import ServerConfig
from agentcli.mcp.login import Endpoints, LoginRequired, NoLogin, Redirect

CLIENT_NAME = "agentcli"


class Authorizer(Protocol):
    """The user's side of a login (`login.BrowserLogin`, `login.NoLogin`)."""

    @property
    def redirect_uri(self) -> str: ...

    def present(self, authorization_url: str, endpoints: Endpoints) -> None:
        """Show the user where the login goes and send them there (may block briefly)."""
        ...

    def wait(self) -> Redirect:
        """Block until the browser came back; raises LoginFailed."""
        ...


def auth_for(server: ServerConfig, store: AuthStore, authorizer: Authorizer) -> httpx2.Auth | None:
    """The httpx auth for `server`'s requests: None when it brings its own header; a refusal on
    401 when nobody can log in and there is no login to use (no registration is made for nothing);
    else the SDK's OAuth flow over `store`."""
    if not server.logs_in:
        return None
    record = store.load(server.url)
    if isinstance(authorizer, NoLogin) and not record.get("tokens"):
        return _RefuseUnauthorized(authorizer.how)
    # Nobody logging in: the registration is used as it is, for refreshing (its redirect never is).
    storage = _Storage(server, store, None if isinstance(authorizer, NoLogin) else authorizer.redirect_uri)
    provider = OAuthClientProvider(
        server.url,
        OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[authorizer.redirect_uri],  # type: ignore[list-item]  # pydantic parses it
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage,
        redirect_handler=lambda url: _present(authorizer, url, provider, server),
        callback_handler=lambda: _came_back(authorizer),
    )
    _restore(provider, record)
    storage.provider = provider
    return provider


async def _present(authorizer: Authorizer, url: str, provider: OAuthClientProvider, server: ServerConfig) -> None:
    metadata = provider.context.oauth_metadata
    endpoints = Endpoints(
        server=server.name,
        url=server.url,
        issuer=str(metadata.issuer) if metadata is not None else "",
        token_endpoint=str(metadata.token_endpoint) if metadata is not None else "",
    )
    await anyio.to_thread.run_sync(authorizer.present, url, endpoints, abandon_on_cancel=True)


async def _came_back(authorizer: Authorizer) -> AuthorizationCodeResult:
    redirect = await anyio.to_thread.run_sync(authorizer.wait, abandon_on_cancel=True)
    return AuthorizationCodeResult(code=redirect.code, state=redirect.state, iss=redirect.iss)


def _restore(provider: OAuthClientProvider, record: dict[str, Any]) -> None:
    """Put back what the SDK keeps in memory only (`OAuthContext` is its public state)."""
    expires_at = record.get("expires_at")
    if isinstance(expires_at, (int, float)):
        provider.context.token_expiry_time = float(expires_at)
    try:
        if isinstance(record.get("authorization_server"), dict):
            provider.context.oauth_metadata = OAuthMetadata.model_validate(record["authorization_server"])
    except ValidationError:
        pass  # discovered again on the next 401


class _Storage:
    """The SDK's `TokenStorage` over one server's record in the `AuthStore`."""

    def __init__(self, server: ServerConfig, store: AuthStore, redirect_uri: str | None) -> None:
        self.server = server
        self.store = store
        self.redirect_uri = redirect_uri
        self.provider: OAuthClientProvider | None = None

    async def get_tokens(self) -> OAuthToken | None:
        tokens = self.store.load(self.server.url).get("tokens")
        try:
            return OAuthToken.model_validate(tokens) if isinstance(tokens, dict) else None
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        metadata = self.provider.context.oauth_metadata if self.provider is not None else None
        self.store.update(
            self.server.url,
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=time.time() + tokens.expires_in if tokens.expires_in else None,
            authorization_server=metadata.model_dump(mode="json", exclude_none=True) if metadata else None,
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        record = self.store.load(self.server.url)
        if self.server.oauth_client_id:  # registered by hand: the configured id, the secret given at login
            secret = record.get("client_secret")
            return OAuthClientInformationFull(
                client_id=self.server.oauth_client_id,
                client_secret=secret if isinstance(secret, str) else None,
                redirect_uris=[self.redirect_uri] if self.redirect_uri else None,  # type: ignore[list-item]
                token_endpoint_auth_method="client_secret_basic" if isinstance(secret, str) else "none",
            )
        try:
            client = OAuthClientInformationFull.model_validate(record.get("client"))
        except ValidationError:
            return None
        if self.redirect_uri is not None and self.redirect_uri not in [str(u) for u in client.redirect_uris or ()]:
            return None  # registered for another callback port: register again
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if not self.server.oauth_client_id:
            self.store.update(self.server.url, client=client_info.model_dump(mode="json", exclude_none=True))


class _RefuseUnauthorized(httpx2.Auth):
    """No login and nobody to make one: a server's OAuth challenge (401, or 403 asking for a
    scope, with `WWW-Authenticate: Bearer`) raises LoginRequired. A bare 401 is left to fail as
    it would (a missing or wrong header of the user's own)."""

    def __init__(self, how: str) -> None:
        self.how = how

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        response = yield request
        challenge = response.headers.get("www-authenticate", "")
        if not challenge.lower().startswith("bearer"):
            return
        if response.status_code == 401 or (response.status_code == 403 and "insufficient_scope" in challenge):
            raise LoginRequired(self.how)

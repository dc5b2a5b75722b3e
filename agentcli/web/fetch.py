"""Getting one URL for WebFetch: checked addresses only, no redirect to another host, a size cap
and a deadline applied while reading.

Over the same HTTP client as the model providers (`httpx2`, imported when a fetch starts), with
their habits (`agentcli.providers.http`): proxies from the environment (`HTTPS_PROXY`,
`HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, as curl reads them), a connect timeout and a longest
silence between two reads, and a cancel event that shuts the connection down at once.

- **Addresses** (`addresses`): the host is resolved and every address checked before anything
  is sent; the request then goes to a checked address itself, the host name kept in the `Host`
  header and, for https, in the TLS handshake (the certificate is verified for the name). So a
  second DNS answer can never redirect it. Through a proxy the proxy connects: the addresses
  are checked all the same, but which one the proxy reaches is the proxy's business.
- **Redirects**: followed (at most `MAX_REDIRECTS`) while they stay on the same host and scheme
  (or go from http to https); one to another host, or down to http, is not followed: the
  caller gets `Redirected`, saying where it points.
- **Size**: reading stops at `FetchLimits.max_bytes` of the decoded body (a compressed bomb
  stops there too); the rest is never read and the result says the page was cut.
- **Time**: a connect timeout, a longest silence between reads, and a deadline for the whole
  fetch (a body that trickles in forever ends there).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin

from agentcli import __version__
from agentcli.contracts import Cancellation
from agentcli.errors import Cancelled
from agentcli.providers.http import aborted_on, problem
from agentcli.web.addresses import AddressRefused, IPAddress, Resolver, checked_addresses, system_resolver
from agentcli.web.urls import FetchError, Target, check_url, upgraded

if TYPE_CHECKING:
    import httpx2

MAX_REDIRECTS = 10
ACCEPT = "text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.5"


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 10 * 1024 * 1024
    """The most of a body read (decoded); the rest is not."""
    connect_s: float = 10.0
    idle_s: float = 30.0
    """The longest silence between two reads."""
    total_s: float = 60.0
    """The whole fetch, redirects included."""


@dataclass(frozen=True)
class Fetched:
    url: str
    """Where the body came from (after same-host redirects)."""
    status: int
    reason: str
    content_type: str
    """The media type, lower-case, without parameters (`text/html`); empty when none was sent."""
    charset: str | None
    body: bytes
    truncated: bool
    """The body went on past `FetchLimits.max_bytes`."""


@dataclass(frozen=True)
class Redirected:
    """A redirect WebFetch does not follow by itself: to another host, or from https down to http."""

    url: str
    location: str
    """The absolute URL it points to."""
    status: int


class Fetcher:
    """Fetches URLs; `resolver` answers what a host name's addresses are (tests give their own)."""

    def __init__(self, limits: FetchLimits | None = None, resolver: Resolver = system_resolver) -> None:
        self.limits = limits or FetchLimits()
        self.resolver = resolver

    def fetch(
        self, target: Target, *, private_allowed: bool, cancel: Cancellation | None = None
    ) -> Fetched | Redirected:
        """GET `target` (redirects within its host followed). `private_allowed`: its host may be
        a private, loopback or link-local address (an allow rule names it). Raises FetchError,
        AddressRefused, or `Cancelled` once `cancel` is set."""
        import httpx2

        deadline = time.monotonic() + self.limits.total_s
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with self._response(target, private_allowed, cancel) as response:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        next_url = urljoin(target.url, location.strip())
                        try:
                            following = check_url(next_url)
                        except FetchError:
                            return Redirected(target.url, next_url, response.status_code)
                        if not _same_site(target, following):
                            return Redirected(target.url, next_url, response.status_code)
                        target = following
                        continue
                    body, truncated = self._read(response, deadline, cancel)
                    kind, _, params = response.headers.get("content-type", "").partition(";")
                    return Fetched(
                        target.url,
                        response.status_code,
                        response.reason_phrase,
                        kind.strip().lower(),
                        _charset(params),
                        body,
                        truncated,
                    )
            except httpx2.TimeoutException as error:
                self._stop_if_cancelled(cancel)
                raise FetchError(f"{target.host} {_timed_out(error, self.limits)}.") from None
            except httpx2.TransportError as error:
                self._stop_if_cancelled(cancel)
                raise FetchError(f"Could not fetch {target.url}: {problem(error)}.") from None
        raise FetchError(f"{target.url} redirects more than {MAX_REDIRECTS} times; WebFetch stopped following it.")

    @contextmanager
    def _response(
        self, target: Target, private_allowed: bool, cancel: Cancellation | None
    ) -> Iterator[httpx2.Response]:
        """The response to a GET of `target`, its body still unread; closed on exit."""
        import httpx2

        try:
            addresses = checked_addresses(target.host, target.port, self.resolver, private_allowed=private_allowed)
        except OSError as error:
            raise FetchError(f"Could not resolve {target.host}: {problem(error)}.") from None
        proxy = _proxy_for(target)
        timeout = httpx2.Timeout(self.limits.idle_s, connect=self.limits.connect_s)
        headers = {"user-agent": f"agentcli/{__version__} (WebFetch)", "accept": ACCEPT}
        with httpx2.Client(timeout=timeout, trust_env=False, follow_redirects=False, proxy=proxy) as client:
            if proxy is not None:  # the proxy resolves and connects
                request = client.build_request("GET", target.url, headers=headers)
                response = client.send(request, stream=True)
            else:
                response = self._send_pinned(client, target, addresses, headers)
            try:
                with aborted_on(cancel, response):
                    yield response
            finally:
                response.close()

    @staticmethod
    def _send_pinned(
        client: httpx2.Client, target: Target, addresses: list[IPAddress], headers: dict[str, str]
    ) -> httpx2.Response:
        """Send the GET to each checked address in turn until one answers (never to the name)."""
        import httpx2

        netloc = target.parts.netloc.rpartition("@")[2]
        failure: httpx2.ConnectError | None = None
        for address in addresses:
            host = f"[{address}]" if address.version == 6 else str(address)
            url = target.parts._replace(netloc=f"{host}:{target.port}").geturl()
            extensions = {"sni_hostname": target.host} if target.parts.scheme == "https" else {}
            request = client.build_request("GET", url, headers={**headers, "host": netloc}, extensions=extensions)
            try:
                return client.send(request, stream=True)
            except httpx2.ConnectError as error:
                failure = error
        assert failure is not None
        raise failure

    def _read(self, response: httpx2.Response, deadline: float, cancel: Cancellation | None) -> tuple[bytes, bool]:
        """The body up to `max_bytes`, and whether there was more."""
        limit = self.limits.max_bytes
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            self._stop_if_cancelled(cancel)
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                return b"".join(chunks)[:limit], True
            if time.monotonic() > deadline:
                raise FetchError(
                    f"The page was still arriving after {self.limits.total_s:g} s; WebFetch stopped reading it."
                )
        self._stop_if_cancelled(cancel)
        return b"".join(chunks), False

    @staticmethod
    def _stop_if_cancelled(cancel: Cancellation | None) -> None:
        if cancel is not None and cancel.is_set():
            raise Cancelled("Interrupted by the user.")


def _same_site(current: Target, following: Target) -> bool:
    """A redirect WebFetch follows by itself: the same host, and not from https down to http."""
    downgrade = current.parts.scheme == "https" and following.parts.scheme == "http"
    return following.host == current.host and not downgrade


def _proxy_for(target: Target) -> str | None:
    """The proxy the environment names for `target` (None: connect directly), as curl would use it."""
    import urllib.request  # http.client and email come with it: not on the start-up path

    proxies = urllib.request.getproxies()
    proxy = proxies.get(target.parts.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(target.host):
        return None
    return proxy


def _charset(params: str) -> str | None:
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"').lower()
    return None


def _timed_out(error: Exception, limits: FetchLimits) -> str:
    import httpx2

    if isinstance(error, httpx2.ConnectTimeout):
        return f"did not accept a connection within {limits.connect_s:g} s"
    return f"sent nothing for {limits.idle_s:g} s; WebFetch stopped waiting"


__all__ = [
    "AddressRefused",
    "FetchError",
    "FetchLimits",
    "Fetched",
    "Fetcher",
    "Redirected",
    "Target",
    "check_url",
    "upgraded",
]

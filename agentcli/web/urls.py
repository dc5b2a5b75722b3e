"""Which URLs WebFetch takes, as `Target`s: http(s), a host, no credentials, not too long.

Apart from `agentcli.web.fetch` (which imports the HTTP layer) so that judging a call, which
needs only its URL's host, costs nothing at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

MAX_URL_CHARS = 2000


class FetchError(Exception):
    """The URL could not be fetched; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    """A URL checked for fetching: its parts and how to reach its host."""

    url: str
    parts: SplitResult
    host: str
    port: int


def check_url(url: str) -> Target:
    """`url` as a `Target`; FetchError for one WebFetch does not take (not http(s), no host,
    credentials in it, too long)."""
    text = url.strip()
    if len(text) > MAX_URL_CHARS:
        raise FetchError(f"The URL is {len(text):,} characters long; WebFetch takes at most {MAX_URL_CHARS:,}.")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise FetchError(f"{url!r} is not a valid URL ({error}).") from None
    if parts.scheme not in ("http", "https"):
        raise FetchError(f"{url!r} is not an http:// or https:// URL; WebFetch fetches only those.")
    host = parts.hostname
    if not host:
        raise FetchError(f"{url!r} names no host; give a full URL such as https://example.com/page.")
    if parts.username is not None or parts.password is not None:
        raise FetchError("The URL carries a user name or password; WebFetch does not send credentials.")
    return Target(text, parts, host, port or (443 if parts.scheme == "https" else 80))


def upgraded(target: Target) -> Target:
    """`target` over https (an http:// URL upgraded)."""
    if target.parts.scheme == "https":
        return target
    netloc = target.parts.netloc if target.parts.port not in (None, 80) else _host_text(target.host)
    return check_url(target.parts._replace(scheme="https", netloc=netloc).geturl())


def _host_text(host: str) -> str:
    return f"[{host}]" if ":" in host else host

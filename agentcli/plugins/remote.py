"""A marketplace published as a file: `agentcli plugin marketplace add https://host/marketplace.json`.

The file is fetched with WebFetch's client (`agentcli.web.fetch`: the addresses checked, no
redirect to another host, a size cap and a deadline, no credentials sent), over https; plain
http only to this machine (a loopback address), since anyone on the way could otherwise swap the
plugins it lists. It is kept as `.claude-plugin/marketplace.json` of a folder of its own, pinned
by a digest of its bytes; `marketplace update` fetches it again. Such a marketplace has no
folders, so only its entries that name a git repository can be installed (`read_marketplace`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import urlsplit

from agentcli.plugins.manifest import PluginError

MAX_BYTES = 5 * 1024 * 1024
"""The largest marketplace file taken (the official marketplace's is about 100 KB)."""


def is_marketplace_url(text: str) -> bool:
    """Whether `text` is the address of a marketplace file (http(s), ending in `.json`), not a git repository's."""
    try:
        parts = urlsplit(text)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and parts.path.endswith(".json")


def fetch_marketplace_file(url: str, dest: Path) -> str:
    """Fetch the file at `url` into `dest` (its folders made); a digest of its bytes, the pin.
    PluginError, saying why, when it cannot be had."""
    from agentcli.web.addresses import AddressRefused, is_loopback_host
    from agentcli.web.fetch import Fetcher, FetchLimits, Redirected
    from agentcli.web.urls import FetchError, check_url

    try:
        target = check_url(url)
        if target.parts.scheme == "http" and not is_loopback_host(target.host):
            raise PluginError(
                f"{url} is plain http: anyone on the way could change the plugins it lists; give its https:// address."
            )
        got = Fetcher(FetchLimits(max_bytes=MAX_BYTES)).fetch(target, private_allowed=True)
    except (FetchError, AddressRefused) as error:
        raise PluginError(f"Cannot get {url}: {error}") from None
    if isinstance(got, Redirected):
        raise PluginError(f"{url} redirects to {got.location}; add the marketplace from that address if you trust it.")
    if got.status != 200:
        raise PluginError(f"Cannot get {url}: the server answered {got.status} {got.reason}.")
    if got.truncated:
        raise PluginError(f"{url} is larger than {MAX_BYTES // (1024 * 1024)} MB; that is no marketplace file.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(got.body)
    return hashlib.sha256(got.body).hexdigest()

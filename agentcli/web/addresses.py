"""Which network addresses WebFetch may reach, and how a host name becomes them.

A page the model fetches must not become a way into the machine or its network: an address in
a private, loopback, link-local (cloud metadata at 169.254.169.254), shared, multicast or
otherwise reserved range is refused unless an allow rule names the host the URL gives
(`WebFetch(domain:localhost)`). A host name is resolved once, every address it resolves to is
checked (one private address refuses the whole name), and the connection is then made to a
checked address itself (`fetch`), never by resolving the name again: a DNS answer that changes
between the check and the connection (DNS rebinding) cannot move it.

`Resolver` is the seam for tests: a name → its addresses (the system's `getaddrinfo` by default).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from typing import Protocol

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class Resolver(Protocol):
    def __call__(self, host: str, port: int) -> Sequence[str]:
        """The addresses `host` resolves to, as text; OSError when it resolves to none."""
        ...


def system_resolver(host: str, port: int) -> list[str]:
    """The system's answer (`getaddrinfo`), each address once, in its order."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


class AddressRefused(Exception):
    """A host that resolves to an address WebFetch may not reach; the message says which and why."""


def literal_address(host: str) -> IPAddress | None:
    """`host` as an IP address when it is written as one (`127.0.0.1`, `[::1]`, `::1`)."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def kind_of(address: IPAddress) -> str | None:
    """What makes `address` one WebFetch does not reach by default (`loopback`, `private`…); None
    for a public address. An IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`) is judged as itself."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if address.is_private or (isinstance(address, ipaddress.IPv4Address) and address in _SHARED):
        return "private"
    if address.is_reserved or not address.is_global:
        return "reserved"
    return None


_SHARED = ipaddress.ip_network("100.64.0.0/10")
"""Carrier-grade NAT space: not global, and not `is_private` in every Python version."""


def is_loopback_host(host: str) -> bool:
    """`localhost` (and names under it) or a loopback address."""
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    address = literal_address(host)
    return address is not None and kind_of(address) == "loopback"


def checked_addresses(host: str, port: int, resolver: Resolver, *, private_allowed: bool) -> list[IPAddress]:
    """The addresses of `host` WebFetch may connect to, in the resolver's order. Raises
    AddressRefused when one of them is not public and `private_allowed` is false, and OSError
    when the name does not resolve."""
    literal = literal_address(host)
    texts = [str(literal)] if literal is not None else list(resolver(host, port))
    addresses: list[IPAddress] = []
    for text in texts:
        try:
            address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone (`fe80::1%eth0`) is not part of it
        except ValueError:
            raise OSError(f"the resolver gave {text!r} for {host}, which is not an address") from None
        kind = kind_of(address)
        if kind is not None and not private_allowed:
            what = f"is a {kind} address" if literal is not None else f"resolves to {address}, a {kind} address"
            raise AddressRefused(
                f"{host} {what}; WebFetch reaches such addresses only for a host an allow rule names: add "
                f"WebFetch(domain:{host.strip('[]')}) to permissions.allow if you mean to fetch it."
            )
        addresses.append(address)
    if not addresses:
        raise OSError(f"{host} resolves to no address")
    return addresses

"""Which hosts sandboxed commands may reach through the proxy (`proxy`), and what was refused.

A host is allowed when `sandbox.network.allowedDomains` names it (`example.com`; `*.example.com`
for its subdomains, not itself), or when the user said yes to it in this session (the REPL asks
the first time a command needs a host no setting names, through `AsksAboutHost`; `agentcli run`
has nobody to ask, and refuses). Once the name is allowed, the address it resolves to is
judged too: the machine's own loopback, link-local (cloud metadata) and unspecified addresses
are refused unless the setting, or the user's yes, names that very host (`localhost`,
`127.0.0.1`; never `*.example.com`), so a name that
resolves to 127.0.0.1 cannot reach the services of the machine agentcli runs on.

Every refusal is kept (`Refusal`), so the workspace can say in a command's result which hosts
were refused while it ran, and why.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

MAX_REFUSALS = 200
"""Refusals remembered (the oldest are forgotten)."""


class AsksAboutHost(Protocol):
    """Asks the user whether sandboxed commands may reach `host` (`Gate.ask_about_host`): True
    yes, False no, None when nobody can be asked (`agentcli run`)."""

    def __call__(self, host: str, port: int) -> bool | None: ...


@dataclass(frozen=True)
class Refusal:
    at: float
    """`time.monotonic()` when it was refused."""
    host: str
    port: int
    reason: str


class NetworkPolicy:
    """Decides each connection the proxy is asked for (from its threads, concurrently)."""

    def __init__(self, allowed: Sequence[str], ask: AsksAboutHost | None = None) -> None:
        self._exact = {normalize(entry) for entry in allowed if not entry.startswith("*.")}
        self._suffixes = tuple("." + normalize(entry[2:]) for entry in allowed if entry.startswith("*."))
        self._ask = ask
        self._answers: dict[str, bool | None] = {}
        self._asking = threading.Lock()
        self._lock = threading.Lock()
        self._refusals: list[Refusal] = []

    def admits(self, host: str, port: int) -> str | None:
        """None when `host` may be reached; else why not (and the refusal is recorded)."""
        name = normalize(host)
        if self._named(name):
            return None
        with self._lock:
            asked, answer = name in self._answers, self._answers.get(name)
        if not asked and self._ask is not None:
            with self._asking:  # one question at a time; a host asked about meanwhile is not asked again
                with self._lock:
                    asked, answer = name in self._answers, self._answers.get(name)
                if not asked:
                    answer = self._ask(name, port)
                    with self._lock:
                        self._answers[name] = answer
        if answer:
            return None
        reason = "sandbox.network.allowedDomains does not list it"
        reason += ", and the user said no to it" if answer is False else " (and agentcli run asks nobody)"
        return self.refuse(name, port, reason)

    def admits_address(self, host: str, port: int, address: str) -> str | None:
        """None when `address`, which the allowed `host` resolved to, may be reached; else why not."""
        try:
            ip = ipaddress.ip_address(address.split("%")[0])
        except ValueError:
            return self.refuse(host, port, f"it resolved to {address}, which is not an address")
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        if (ip.is_loopback or ip.is_link_local or ip.is_unspecified) and not self._named_exactly(normalize(host)):
            return self.refuse(
                host, port, f"it resolved to {address}, this machine's own or a link-local address, which only an "
                "entry naming exactly that host in sandbox.network.allowedDomains (or your yes to it) opens"
            )  # fmt: skip
        return None

    def refuse(self, host: str, port: int, reason: str) -> str:
        with self._lock:
            self._refusals.append(Refusal(time.monotonic(), host, port, reason))
            del self._refusals[:-MAX_REFUSALS]
        return reason

    def refusals_since(self, since: float) -> list[Refusal]:
        with self._lock:
            return [r for r in self._refusals if r.at >= since]

    def allowed(self) -> list[str]:
        """What is open: the setting's entries, then the hosts approved in this session."""
        with self._lock:
            approved = sorted(host for host, yes in self._answers.items() if yes)
        return [*sorted(self._exact), *(f"*{suffix}" for suffix in self._suffixes), *approved]

    def _named_exactly(self, name: str) -> bool:
        with self._lock:
            approved = self._answers.get(name) is True
        return approved or name in self._exact

    def _named(self, name: str) -> bool:
        return name in self._exact or name.endswith(self._suffixes)


def normalize(host: str) -> str:
    """A host as it is compared: lower case, without brackets or a final dot."""
    return host.strip().strip("[]").rstrip(".").lower()

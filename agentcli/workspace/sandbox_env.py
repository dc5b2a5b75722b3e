"""The environment of a sandboxed command: no credentials, and the proxy in the usual variables.

From the environment every child of agentcli gets (`credentials.child_environment`: without
agentcli's API keys, except those `subprocessEnvPassthrough` names), a sandboxed command also
loses every variable whose name says it holds a secret (`…_TOKEN`, `…_SECRET…`, `…PASSWORD…`,
`…_API_KEY`, `AWS_ACCESS_KEY_ID`, …: `secret_name`) and the addresses of agents and buses
outside the sandbox (`SSH_AUTH_SOCK`, …), again except what the user names in
`subprocessEnvPassthrough`. It gains:

- `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and their lower-case forms: the sandbox's relay to
  agentcli's proxy; `NO_PROXY`/`no_proxy`: the sandbox's own loopback (`localhost`,
  `127.0.0.1`, `::1`), unless `network.allowedDomains` opens the machine's (then through the
  proxy); `NODE_USE_ENV_PROXY=1`, so Node's own `fetch` uses the proxy too;
- `TMPDIR`, `TMP`, `TEMP`: `/tmp`, the sandbox's private temporary folder;
- `AGENTCLI_SANDBOX=1`, for scripts that want to know.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from agentcli.credentials import child_environment

RELAY_PORT = 3128
"""The sandbox's loopback port where the relay to the proxy listens."""
OUTSIDE_ADDRESSES = ("SSH_AUTH_SOCK", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "KRB5CCNAME")
_SECRET = re.compile(
    r"(^|_)(TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH)(_|$)", re.IGNORECASE
)
LOOPBACK = ("localhost", "127.0.0.1", "::1")


def secret_name(name: str) -> bool:
    """Whether a variable's name says it holds a secret."""
    return bool(_SECRET.search(name)) or name in OUTSIDE_ADDRESSES


def inside_environment(
    extra: Mapping[str, str], passthrough: Collection[str] = (), allowed_domains: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a sandboxed command (see the module's docstring), with `extra` (the command's own) added."""
    env = {
        name: value
        for name, value in child_environment(passthrough).items()
        if name in passthrough or not secret_name(name)
    }
    env.update(extra)
    proxy = f"http://127.0.0.1:{RELAY_PORT}"
    direct = ",".join(host for host in LOOPBACK if host not in allowed_domains)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = proxy
    env["NO_PROXY"] = env["no_proxy"] = direct
    env["NODE_USE_ENV_PROXY"] = "1"
    env["TMPDIR"] = env["TMP"] = env["TEMP"] = "/tmp"
    env["AGENTCLI_SANDBOX"] = "1"
    return env

"""`${VAR}` in configuration files: expanded from the environment, never into a checked-in file's hands.

    expand = Expander(environ, checked_in=True, allowed=passthrough)
    expand("Bearer ${TOKEN}", "headers.Authorization")      # "Bearer abc"
    expand.withheld                                          # {"ANTHROPIC_API_KEY": ["env.X"]}

`${VAR}` becomes VAR's value and `${VAR:-default}` its value, or `default` when VAR is unset; an
unset VAR without a default raises `UnsetVariable`. Nothing else is expanded (`$VAR` stays as
written), and an expanded value is never expanded again.

For a file that comes with the repository (`checked_in`: `.mcp.json`), a variable holding one
of agentcli's credentials (`credentials.withheld_variables`: the provider keys every child
process is denied, and any variable holding one of their values) or of the user's cloud account
(`credentials.CLOUD_ACCOUNT_VARIABLES`: AWS keys, Google's credentials file) expands to nothing, unless
the user's own settings name it in `allowed` (`subprocessEnvPassthrough`): a repository cannot
send itself the user's keys. What was withheld, and where, is kept for one notice. Other
variables expand as in Claude Code (a `GITHUB_TOKEN` the user exported for that server).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from agentcli.credentials import CLOUD_ACCOUNT_VARIABLES, MIN_SECRET_LENGTH, PASSTHROUGH_SETTING, withheld_variables

VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UnsetVariable(ValueError):
    """`${VAR}` without a default, and VAR is not set."""

    def __init__(self, name: str, where: str) -> None:
        super().__init__(f"${{{name}}} in {where} is not set; set it, or write ${{{name}:-default}}.")
        self.name = name


class Expander:
    def __init__(self, environ: Mapping[str, str], *, checked_in: bool, allowed: Collection[str] = ()) -> None:
        self.environ = environ
        self.credentials = (
            withheld_variables(allowed, environ) | {name for name in CLOUD_ACCOUNT_VARIABLES if name not in allowed}
            if checked_in
            else set()
        )
        self.withheld: dict[str, list[str]] = {}
        """Each credential variable withheld, and where it was asked for (in order)."""
        self.used: dict[str, str] = {}
        """Each variable expanded, and its value (to conceal it wherever a message could quote it)."""

    def __call__(self, text: str, where: str) -> str:
        """`text` with its variables expanded; `where` names the field for messages (`env.KEY`)."""

        def value(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in self.credentials:
                places = self.withheld.setdefault(name, [])
                if where not in places:
                    places.append(where)
                return ""
            if name in self.environ:
                self.used[name] = self.environ[name]
                return self.environ[name]
            if default is not None:
                return default
            raise UnsetVariable(name, where)

        return VARIABLE.sub(value, text)

    def frozen_withheld(self) -> dict[str, tuple[str, ...]]:
        """`withheld`, each list of places made a tuple."""
        return {name: tuple(places) for name, places in self.withheld.items()}


def conceal(text: str, used: Mapping[str, str]) -> str:
    """`text` with each value of `used` long enough to be a secret shown as `${NAME}` instead."""
    for name, value in sorted(used.items(), key=lambda item: len(item[1]), reverse=True):
        if len(value) >= MIN_SECRET_LENGTH:
            text = text.replace(value, f"${{{name}}}")
    return text


def withheld_notice(source: object, withheld: Mapping[str, Collection[str]]) -> str:
    """The one notice for the credentials withheld from the checked-in file `source`: by variable,
    the places that asked for it (`server "x": env.KEY, args`)."""
    listed = ", ".join(f"{name} ({'; '.join(places)})" for name, places in withheld.items())
    names = ", ".join(f'"{name}"' for name in withheld)
    return (
        f"Withheld from {source}: {listed}. A file checked in with the project never gets agentcli's "
        f"credentials; they expand to nothing. If you trust it with them, add {names} to "
        f"{PASSTHROUGH_SETTING} in your own settings (.agentcli/settings.local.json or "
        "$AGENTCLI_HOME/settings.json)."
    )

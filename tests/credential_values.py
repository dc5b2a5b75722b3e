"""Every credential agentcli knows of, with a value, for the tests that a checked-in file never gets one.

`hold_every_credential` sets them in agentcli's environment (in-process runs), with `COPY`, the
user's own copy of the Anthropic key under another name; `WITHHELD` names them all.
"""

from __future__ import annotations

import pytest

from agentcli.credentials import CREDENTIAL_VARIABLES

SECRETS = {name: f"secret-value-of-{name.lower()}-0123456789" for name in CREDENTIAL_VARIABLES}
COPY = "MY_SAVED_KEY"
WITHHELD = [*CREDENTIAL_VARIABLES, COPY]


def hold_every_credential(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(COPY, SECRETS["ANTHROPIC_API_KEY"])


def assert_no_secret_in(*texts: str) -> None:
    for secret in SECRETS.values():
        assert all(secret not in shown for shown in texts), f"{secret} shown"

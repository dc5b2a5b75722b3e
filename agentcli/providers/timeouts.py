"""How long agentcli waits on a model API: to connect, and for the next bytes of a response.

Plain numbers, for whichever HTTP layer carries the requests (the SDK's httpx today):

- `connect`: a server that cannot be reached fails in seconds, not minutes.
- `stream_idle`: the longest silence between two reads of a response, streamed events
  included. A stream that goes quiet mid-message is then a stream fault, retried by the
  loop like a dropped connection, instead of waiting 10 minutes per try (the SDK's default).
  The API sends `ping` events while a long answer is being prepared, so a healthy stream is
  never silent this long. Set it with `streamIdleTimeoutSeconds` in settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.bounds import SECONDS
from agentcli.setting_keys import setting

IDLE_SETTING = setting("streamIdleTimeoutSeconds")


@dataclass(frozen=True)
class Timeouts:
    connect: float = 10.0
    stream_idle: float = 90.0

    @classmethod
    def from_setting(cls, value: object, source: object = "settings") -> Timeouts:
        """With `streamIdleTimeoutSeconds` (None: the default). UsageError unless a positive number
        of seconds, at most a day (`agentcli.bounds.SECONDS`)."""
        if value is None:
            return cls()
        return cls(stream_idle=float(SECONDS.checked(value, f"Setting {IDLE_SETTING} in {source}")))

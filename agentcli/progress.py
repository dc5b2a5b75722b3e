"""No-progress detection: stop a run that is going round in circles."""

from __future__ import annotations

import json

from agentcli.contracts import JSON, ToolCall

REPEAT_LIMIT = 4
"""The same tool with the same input this many calls in a row means the model is stuck."""
ERROR_STREAK_LIMIT = 6
"""This many failed tool calls in a row, with no success between, means the same."""
MALFORMED_ANSWER_LIMIT = 3
"""This many answers in a row holding a call that could not be read (a malformed tag of the text
tool protocol, arguments that are not JSON) mean the model does not manage the calling format."""


class ProgressWatch:
    def __init__(self) -> None:
        self._last_call: str | None = None
        self._repeats = 0
        self._errors = 0
        self._malformed = 0

    def observe(self, calls: list[ToolCall], results: list[JSON], *, malformed: bool = False) -> str | None:
        """Feed one turn's calls and results (`malformed`: some call could not be read); returns
        why to stop, or None to go on."""
        self._malformed = self._malformed + 1 if malformed else 0
        if self._malformed >= MALFORMED_ANSWER_LIMIT:
            return (
                f"No progress: {self._malformed} answers in a row held tool calls that could not be read "
                "(each was answered with the expected form). Try a model that follows the calling format, "
                "or another --tool-protocol."
            )
        for call, result in zip(calls, results, strict=False):
            key = call.name + json.dumps(call.input, sort_keys=True)
            self._repeats = self._repeats + 1 if key == self._last_call else 1
            self._last_call = key
            self._errors = self._errors + 1 if result.get("is_error") else 0
            if self._repeats >= REPEAT_LIMIT:
                return f"No progress: the model called {call.name} with the same input {self._repeats} times in a row."
            if self._errors >= ERROR_STREAK_LIMIT:
                return f"No progress: {self._errors} tool calls in a row failed."
        return None

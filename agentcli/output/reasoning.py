"""The model's streamed reasoning as whole lines, for the front ends that show it dimmed.

Reasoning (`ReasoningDelta` events) arrives in pieces that split lines anywhere; a front end
shows it a line at a time, under one heading, and ends it when anything else of the turn
arrives (its answer, a tool call, the whole message):

    ✻ Thinking…
      The user wants the file read first,
      then a summary.

It is never the answer: `run` prints the answer alone on stdout, and the conversation keeps
the reasoning as a thinking block that providers do not send back.
"""

from __future__ import annotations

from agentcli.safe_text import for_terminal

HEADING = "✻ Thinking…"
INDENT = "  "


class ReasoningLines:
    """Collects reasoning pieces and hands back the lines they complete, ready to print."""

    def __init__(self) -> None:
        self._partial: str | None = None
        """The unfinished last line; None: no reasoning in progress."""

    @property
    def active(self) -> bool:
        return self._partial is not None

    def feed(self, delta: str) -> list[str]:
        """The lines `delta` completes, the heading first when reasoning begins."""
        lines = [HEADING] if self._partial is None else []
        *complete, self._partial = ((self._partial or "") + delta).split("\n")
        return lines + [INDENT + for_terminal(line) for line in complete if line.strip()]

    def end(self) -> list[str]:
        """The last line of the reasoning in progress (none when nothing is left)."""
        rest, self._partial = self._partial, None
        return [INDENT + for_terminal(rest)] if rest and rest.strip() else []

"""How the REPL shows a Task call: its sub-agent on one line, never its whole conversation.

While it runs (live, above the spinner; one line per sub-agent when several run at once):

    ● Explore(find the config loader) · 6 tool calls · 12.4k tokens · Grep(load_config)

Once it is done:

    ● Explore(find the config loader)
      ⎿ Done · 3 turns · 6 tool calls · 12.4k tokens

or, when it failed, `⎿ <what stopped it> · 2 turns · …` in red. The counts come from the
sub-agent's own events (`agentcli.output.subagents`); `/agents last` prints its conversation.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from agentcli.contracts import JSON
from agentcli.events import SubagentFinished
from agentcli.output.labels import subagent_counts
from agentcli.output.subagents import SubagentRun
from agentcli.safe_text import for_terminal
from agentcli.ui.tool_render import RESULT_PREFIX

TASK_TOOL = "Task"


def _words(text: object) -> str:
    return " ".join(for_terminal(part) for part in str(text).split())


def task_title(tool_input: JSON, run: SubagentRun | None = None) -> tuple[str, str]:
    """(`Explore`, `find the config loader`): the sub-agent's type and the call's description."""
    name = run.name if run is not None else tool_input.get("subagent_type") or TASK_TOOL
    description = run.started.description if run is not None else tool_input.get("description", "")
    return _words(name), _words(description)


class SubagentLine:
    """`● Explore(find the config loader) · 6 tool calls · 12.4k tokens · Grep(load_config)`.

    `run` is None until the sub-agent has started (then the line is the call's alone); with
    `failed` known (True/False) the dot is coloured and the counts are left to the summary."""

    def __init__(self, tool_input: JSON, run: SubagentRun | None, *, failed: bool | None = None) -> None:
        self.tool_input = tool_input
        self.run = run
        self.failed = failed

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        name, description = task_title(self.tool_input, self.run)
        dot = {None: "bold", True: "bold red", False: "bold green"}[self.failed]
        colour = self.run.started.color if self.run is not None else ""
        text = Text.assemble(("● ", dot), (name, f"bold {colour}".strip()), f"({description})")
        run = self.run
        if run is not None and self.failed is None:
            text.append(f" · {subagent_counts(run.tool_calls, run.usage)}", style="dim")
            if run.last_action:
                text.append(f" · {_words(run.last_action)}")
        text.no_wrap = True
        text.overflow = "ellipsis"
        yield text


class SubagentSummary:
    """`  ⎿ Done · 3 turns · 6 tool calls · 12.4k tokens`, or what stopped it (in red)."""

    def __init__(self, finished: SubagentFinished) -> None:
        self.finished = finished

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        finished = self.finished
        counts = subagent_counts(finished.tool_calls, finished.usage, finished.turns)
        said = f"{_words(finished.error)} · {counts}" if finished.error else f"Done · {counts}"
        text = Text.assemble((RESULT_PREFIX, "dim"), (said, "red" if finished.error else ""))
        text.no_wrap = True
        text.overflow = "ellipsis"
        yield text

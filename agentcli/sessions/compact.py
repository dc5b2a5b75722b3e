"""Compaction: make a long conversation small again, in two steps, each with a bounded cost.

1. Clear old tool results: every tool_result block older than the last `keep_recent`
   tool-result messages gets a short placeholder as its content. Free (no request), and the
   conversation keeps its shape, so every tool_use is still answered.
2. Summarise (only if step 1 was not enough, or the user asked with /compact): ONE request,
   no tools, at most `SUMMARY_MAX_TOKENS` out, whose input is the conversation rendered as
   text and capped at a fixed number of characters. The new conversation starts with a user
   message holding the summary, so it has no tool_use left to answer.

Both produce a NEW message list; the caller records a boundary in the transcript and then
the new messages (earlier transcript lines are never rewritten).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentcli.contracts import JSON, Model, ModelRequest, Unwatched, Usage
from agentcli.conversation import (
    block_text,
    blocks_of,
    is_error_result,
    is_text,
    is_tool_result,
    is_tool_use,
    result_call_id,
    result_text,
    text_block,
    text_of,
    tool_call,
    tool_results,
    user_message,
    with_result_content,
)
from agentcli.errors import AgentcliError, TransientModelError
from agentcli.truncate import cap_middle

KEEP_RECENT = 3
"""Tool-result messages (the newest ones) whose results stay as they are."""
CLEARED = "[Old tool result cleared to save context. Run the tool again if you need it.]"
SUMMARY_MAX_TOKENS = 4_000
SUMMARY_INPUT_CHARS = 400_000
"""About 100k tokens: the most one summary request may send, whatever the conversation's size."""
BLOCK_CHARS = 4_000
"""Each text, tool input or tool result is capped to this in the rendering for the summary."""
SUMMARY_ATTEMPTS = 2

SUMMARY_SYSTEM = (
    "You summarise a conversation between a user and agentcli, a coding assistant working in the user's "
    "project, so the work can continue in a fresh context window with only your summary. Write plain text "
    "with the requested headings and nothing before or after them."
)
SUMMARY_TASK = """Summarise the conversation above under these headings:

1. Requests: everything the user asked for, in order, keeping their exact constraints and preferences.
2. Technical details: files read or changed (paths) and how they changed, important code, commands run and
   their outcome, decisions taken and why.
3. Errors and fixes: what failed and what was done about it.
4. Current state: what was being worked on right before this summary, and what is left to do.
5. Next step: only if the user's latest request clearly implies one.

Be specific (paths, names, commands) and brief. Do not call tools."""

SUMMARY_INTRO = (
    "This session continues an earlier conversation that was compacted to save context. "
    "Summary of the earlier conversation:\n\n"
)
CONTINUE_NOTE = "Continue the task from where it stopped, without asking the user to repeat anything."


class CompactionFailed(AgentcliError):
    """The summary request failed or came back empty; the conversation is left as it was."""


@dataclass
class Compacted:
    """What a compaction did; `messages` is the new conversation."""

    messages: list[JSON]
    tokens_before: int
    tokens_after: int
    """An estimate (the next response measures the real size)."""
    cleared: int = 0
    summarised: bool = False
    usage: Usage = field(default_factory=Usage)
    blocked: str = ""
    """Why a PreCompact hook stopped it (then nothing changed)."""
    summary: str = ""
    """The summary the model wrote, when it summarised."""

    @property
    def changed(self) -> bool:
        return self.cleared > 0 or self.summarised

    def describe(self, auto: bool = False) -> str:
        if self.blocked:
            return f"Not compacted: a PreCompact hook blocked it ({self.blocked})."
        if not self.changed:
            return f"Nothing to compact (~{_k(self.tokens_before)} tokens)."
        done = []
        if self.cleared:
            done.append(f"cleared {self.cleared} old tool result{'s' if self.cleared != 1 else ''}")
        if self.summarised:
            done.append("summarised the conversation")
        label = "Auto-compacted" if auto else "Compacted"
        return f"{label}: {' and '.join(done)} (~{_k(self.tokens_before)} → ~{_k(self.tokens_after)} tokens)."


def _k(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 1000 else str(tokens)


# ------------------------------------------------------------------- step 1


def clear_old_tool_results(messages: Sequence[JSON], keep_recent: int = KEEP_RECENT) -> tuple[list[JSON], int]:
    """A copy of `messages` with old tool results replaced by a placeholder, and how many were."""
    holders = [i for i, m in enumerate(messages) if m["role"] == "user" and _tool_results(m)]
    old = set(holders[: max(0, len(holders) - keep_recent)])
    cleared = 0
    result: list[JSON] = []
    for index, message in enumerate(messages):
        if index in old:
            content = []
            for block in message["content"]:
                if is_tool_result(block) and len(result_text(block)) > len(CLEARED):
                    block = with_result_content(block, CLEARED)
                    cleared += 1
                content.append(block)
            message = {**message, "content": content}
        result.append(message)
    return result, cleared


def _tool_results(message: JSON) -> list[JSON]:
    return tool_results(blocks_of(message))


# ------------------------------------------------------------------- step 2


def render_conversation(messages: Sequence[JSON], max_chars: int = SUMMARY_INPUT_CHARS) -> str:
    """The conversation as plain text for the summary request, at most about `max_chars` long.

    Reminder blocks are left out (they are sent again after compaction), as are thinking blocks.
    """
    names: dict[str, str] = {}
    parts: list[str] = []
    for message in messages:
        role = message["role"]
        for block in blocks_of(message):
            if is_text(block) and not block_text(block).startswith("<system-reminder>"):
                parts.append(f"[{role}]\n{cap_middle(block_text(block), BLOCK_CHARS)}")
            elif is_tool_use(block):
                call = tool_call(block)
                names[call.id] = call.name
                tool_input = cap_middle(json.dumps(call.input, ensure_ascii=False), BLOCK_CHARS)
                parts.append(f"[assistant called {call.name}]\n{tool_input}")
            elif is_tool_result(block):
                name = names.get(result_call_id(block), "tool")
                label = f"{name} error" if is_error_result(block) else f"{name} result"
                parts.append(f"[{label}]\n{cap_middle(result_text(block), BLOCK_CHARS)}")
    text = "\n\n".join(parts)
    if len(text) <= max_chars:
        return text
    head = max_chars // 5  # the start holds the original request; the end, the current state
    tail = max_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n\n[... {omitted:,} characters of the conversation omitted ...]\n\n{text[-tail:]}"


def summary_request(
    messages: Sequence[JSON],
    *,
    model: str,
    instructions: str = "",
    max_tokens: int = SUMMARY_MAX_TOKENS,
    max_input_chars: int = SUMMARY_INPUT_CHARS,
) -> ModelRequest:
    """One request, no tools (so the model cannot act, and tool blocks need no definitions)."""
    body = f"<conversation>\n{render_conversation(messages, max_input_chars)}\n</conversation>\n\n{SUMMARY_TASK}"
    if instructions.strip():
        body += f"\n\nThe user asked for this in the summary: {instructions.strip()}"
    return ModelRequest(
        model=model,
        system=[text_block(SUMMARY_SYSTEM)],
        tools=[],
        messages=[user_message([text_block(body)])],
        max_tokens=max_tokens,
    )


def summarise(model: Model, request: ModelRequest) -> tuple[str, Usage]:
    """The summary text and what it cost; CompactionFailed if there is none."""
    usage = Usage()
    for attempt in range(1, SUMMARY_ATTEMPTS + 1):
        try:
            response = model.stream(request, Unwatched())
        except TransientModelError as error:
            if attempt == SUMMARY_ATTEMPTS:
                raise CompactionFailed(f"The summary request failed: {error}") from error
            continue
        except AgentcliError as error:
            raise CompactionFailed(f"The summary request failed: {error}") from error
        usage.add(response.usage)
        text = text_of(response.content).strip()
        if text:
            return text, usage
        raise CompactionFailed("The model returned an empty summary.")
    raise CompactionFailed("The summary request failed.")  # not reached


def summarised_conversation(
    summary: str, reminders: list[JSON], *, keep: JSON | None = None, mid_task: bool = False
) -> list[JSON]:
    """The new conversation: one user message with fresh reminders and the summary.

    `keep` is a user prompt not yet answered: its own words follow the summary (its reminder
    blocks are dropped: `reminders` says it all again). `mid_task` asks the model to go on.
    """
    text = SUMMARY_INTRO + summary + (f"\n\n{CONTINUE_NOTE}" if mid_task else "")
    content: list[JSON] = [*reminders, text_block(text)]
    if keep is not None:
        content += [b for b in blocks_of(keep) if not block_text(b).startswith("<system-reminder>")]
    return [user_message(content)]


def is_plain_prompt(message: JSON) -> bool:
    """A user message with the user's words only (no tool results)."""
    return message["role"] == "user" and isinstance(message["content"], list) and not _tool_results(message)


# ------------------------------------------------------------------- sizes


def json_chars(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False))


class ConversationSize:
    """The JSON size of a conversation as it grows, each message sized once, when it first shows up.

    Messages never change once added (earlier messages are never rewritten), so a list seen
    before is counted on from where it was left; a list that was replaced (a compaction, a
    resume) or that shrank is counted afresh. The figures equal `json_chars` of the list and of
    its tail after the last assistant message, which a check before every request needs
    without a pass over the whole conversation.
    """

    def __init__(self) -> None:
        self._restart(None)

    def _restart(self, messages: Sequence[JSON] | None) -> None:
        self._messages = messages
        self._counted = 0
        self._chars = 0
        """Of the counted messages, each alone (`json_chars`)."""
        self._tail_messages = 0
        self._tail_chars = 0
        """The same for those after the last assistant message."""
        self._answered = False
        """An assistant message was counted."""

    def of(self, messages: Sequence[JSON]) -> ConversationSize:
        """Bring the count up to date with `messages`; returns self."""
        if messages is not self._messages or len(messages) < self._counted:
            self._restart(messages)
        for message in messages[self._counted :]:
            chars = json_chars(message)
            self._chars += chars
            if message["role"] == "assistant":
                self._answered, self._tail_messages, self._tail_chars = True, 0, 0
            else:
                self._tail_messages += 1
                self._tail_chars += chars
        self._counted = len(messages)
        return self

    @property
    def answered(self) -> bool:
        return self._answered

    def total_chars(self) -> int:
        """`json_chars(messages)`."""
        return _list_chars(self._counted, self._chars)

    def chars_after_answer(self) -> int:
        """`json_chars` of the messages after the last assistant message."""
        return _list_chars(self._tail_messages, self._tail_chars)


def _list_chars(count: int, item_chars: int) -> int:
    """`json_chars` of a list of `count` items of `item_chars` in all: brackets and ", " between them."""
    return 2 + item_chars + 2 * max(count - 1, 0)


def estimate_tokens(context_tokens: int, size: ConversationSize, fixed_chars: Callable[[], int]) -> int:
    """The conversation's size now: `context_tokens` was measured through the newest assistant
    message; what came after it (tool results, a new prompt) is estimated at 4 characters a token.
    `fixed_chars` (system and tools) is only sized when nothing was measured yet: this runs every step."""
    if not size.answered or not context_tokens:
        return (fixed_chars() + size.total_chars()) // 4
    return context_tokens + size.chars_after_answer() // 4


def scaled(tokens: int, old: Sequence[JSON], new: Sequence[JSON], fixed_chars: int) -> int:
    """`tokens` for `old` scaled to `new` by their JSON size (system and tools included)."""
    before = fixed_chars + json_chars(old)
    return tokens * (fixed_chars + json_chars(new)) // max(before, 1)

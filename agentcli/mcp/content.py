"""MCP prompts as `/mcp__<server>__<prompt>` commands, MCP resources as `@server:uri` attachments.

    content = McpContent(manager, timeout_s)
    content.prompts()                        # {"mcp__demo__review": PromptCommand(...)}, for /help and completion
    content.expand_prompt(name, "a b k=v")   # the prompt's messages as user content; None when not a prompt
    content.attach_resources(text)           # (blocks to attach after the text, notices)

Arguments of a prompt: `key=value` words name an argument; other words fill the declared
arguments in order; a missing required one is a usage error naming them all. A prompt's
messages (text, images, embedded resources) become the content of the one user message.

A resource mention is `@server:scheme://rest` (the scheme keeps `@notes.md:12` a plain
word). Its text contents are attached after the message in a `<resource>` block, binary
contents noted; an unknown server or a read that fails leaves the mention as text and
says why in a notice. Listings are cached per connection (a reconnect lists again).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentcli.contracts import JSON
from agentcli.errors import UsageError
from agentcli.mcp.names import full_server_part, safe_part, server_parts
from agentcli.mcp.status import CallTimedOut, PromptInfo, ServerDown, ServerStatus

if TYPE_CHECKING:
    from agentcli.mcp.manager import McpManager

T = TypeVar("T")
PREFIX = "mcp__"
_MENTION = re.compile(r"(?<![^\s(\[])@(?P<server>[A-Za-z0-9_.-]+):(?P<uri>[A-Za-z][A-Za-z0-9+.-]*://[^\s`]+)")
_TRAILING = ".,;:!?)]}'\""


def mentions_mcp(text: str) -> bool:
    """`text` is an MCP prompt's command or mentions a resource: its servers must be connected first."""
    return text.lstrip().startswith("/" + PREFIX) or _MENTION.search(text) is not None


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: PromptInfo

    @property
    def hint(self) -> str:
        return " ".join(f"<{name}>" if name in self.prompt.required else f"[{name}]" for name in self.prompt.arguments)


class McpContent:
    def __init__(self, manager: McpManager | None, timeout_s: float) -> None:
        self.manager = manager
        self.timeout_s = timeout_s
        self._listed: dict[str, tuple[ServerStatus, list[PromptInfo]]] = {}

    def prompts(self) -> dict[str, PromptCommand]:
        """Every connected server's prompts by command name (without the slash)."""
        found: dict[str, PromptCommand] = {}
        if self.manager is None:
            return found
        statuses = self.manager.statuses()
        parts, _ = server_parts(status.name for status in statuses)
        for status in statuses:
            if status.state != "connected" or "prompts" not in status.offers or status.name not in parts:
                continue
            for prompt in self._prompts_of(status):
                found.setdefault(  # by the server's full name, as in Claude Code: no API limit here
                    f"{PREFIX}{full_server_part(status.name)}__{safe_part(prompt.name)}",
                    PromptCommand(status.name, prompt),
                )
        return found

    def expand_prompt(self, name: str, args: str) -> list[JSON] | None:
        """The content for `/name args`; None when `name` is not an MCP prompt's command. Raises
        UsageError (nothing is sent) for arguments that do not fit or a server that fails."""
        if not name.startswith(PREFIX) or self.manager is None:
            return None
        command = self.prompts().get(name)
        if command is None:
            raise UsageError(
                f"/{name} is not a prompt of a connected MCP server; /mcp shows the servers, /help the prompts."
            )
        arguments = _arguments(command, args)
        from agentcli.mcp import offers

        try:
            return self._request(
                command.server, lambda session: offers.get_prompt(session, command.prompt.name, arguments)
            )
        except (ServerDown, Exception) as error:
            raise UsageError(f"/{name}: the MCP server {command.server!r} could not give the prompt: {error}") from None

    def attach_resources(self, text: str) -> tuple[list[JSON], list[str]]:
        """Blocks for each `@server:uri` in `text`, and a notice for each that could not be read."""
        blocks: list[JSON] = []
        notices: list[str] = []
        seen: set[tuple[str, str]] = set()
        for match in _MENTION.finditer(text):
            server, uri = match.group("server"), match.group("uri").rstrip(_TRAILING)
            if (server, uri) in seen:
                continue
            seen.add((server, uri))
            try:
                blocks += self._read(server, uri)
            except LookupError as missing:
                notices.append(f"@{server}:{uri} left as text: {missing.args[0]}")
        return blocks, notices

    def _read(self, server: str, uri: str) -> list[JSON]:
        known = {status.name: status for status in self.manager.statuses()} if self.manager is not None else {}
        status = known.get(server)
        if status is None:
            names = ", ".join(known) or "none configured"
            raise LookupError(f"no MCP server {server!r} (servers: {names}).")
        if status.state != "connected":
            raise LookupError(f"the MCP server {server!r} is {status.state}; /mcp shows why.")
        from agentcli.mcp import offers

        try:
            return self._request(server, lambda session: offers.read_resource(session, uri))
        except Exception as error:
            raise LookupError(f"the MCP server {server!r} could not read it: {error}") from None

    def _prompts_of(self, status: ServerStatus) -> list[PromptInfo]:
        cached = self._listed.get(status.name)
        if cached is not None and cached[0] is status:
            return cached[1]
        from agentcli.mcp import offers

        try:
            prompts = self._request(status.name, offers.list_prompts)
        except Exception:
            prompts = []  # a server that cannot list its prompts offers none (its tools still work)
        self._listed[status.name] = (status, prompts)
        return prompts

    def _request(self, server: str, operation: Callable[[Any], Awaitable[T]]) -> T:
        """`operation` on the server's session, given up after the connect timeout."""
        assert self.manager is not None
        try:
            return self.manager.request(server, operation, timeout=self.timeout_s)
        except CallTimedOut as late:
            raise TimeoutError(str(late)) from None


def _arguments(command: PromptCommand, args: str) -> dict[str, str]:
    from agentcli.skills.expand import split_arguments

    declared = command.prompt.arguments
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in split_arguments(args):
        key, equals, value = word.partition("=")
        if equals and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in named]
    if len(positional) > len(free):
        hint = command.hint or "no arguments"
        raise UsageError(f"/{PREFIX}{command.server}__{command.prompt.name} takes {hint}; too many words: {args!r}.")
    named.update(zip(free, positional, strict=False))
    missing = [name for name in declared if name in command.prompt.required and name not in named]
    if missing:
        raise UsageError(
            f"/{PREFIX}{command.server}__{command.prompt.name} needs {', '.join(missing)}: "
            f"give them in order or as key=value ({command.hint})."
        )
    return named

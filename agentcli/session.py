"""A session: one conversation with everything around it (settings, context, gate, tools, loop).

Both front ends build one: `agentcli run` sends a single message, the REPL many.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.catalog import DEFAULT_MODEL, ModelInfo, model_info
from agentcli.context.session import PreparedMessage, SessionContext
from agentcli.contracts import Model, ToolContext
from agentcli.events import EventSink, Notice
from agentcli.executor import ToolExecutor
from agentcli.loop import Agent, LoopConfig, RunResult
from agentcli.permissions.gate import Gate, build_gate
from agentcli.permissions.prompt import Prompter
from agentcli.permissions.rules import split_rule_list
from agentcli.settings import Settings, load_settings


@dataclass
class SessionOptions:
    """What the command line can say about a session (shared by `run` and the REPL)."""

    model: str | None = None
    permission_mode: str | None = None
    allowed_tools: list[str] = field(default_factory=list)
    disallowed_tools: list[str] = field(default_factory=list)
    append_system_prompt: str | None = None
    max_turns: int | None = None
    max_budget_tokens: int | None = None


def split_rules(values: list[str]) -> list[str]:
    """Rules from repeated flags, each holding one or more rules (see `split_rule_list`)."""
    return [rule for value in values for rule in split_rule_list(value)]


def resolve_model(flag: str | None, settings: Settings) -> str:
    return flag or os.environ.get("AGENTCLI_MODEL") or settings.get("model") or DEFAULT_MODEL


class Session:
    """Raises UsageError (exit 2) on malformed settings or rules, before anything is sent."""

    def __init__(
        self,
        options: SessionOptions,
        cwd: Path,
        on_event: EventSink,
        *,
        model: Model | None = None,
        prompter: Prompter | None = None,
    ) -> None:
        from agentcli.tools import builtin_tools

        self.options = options
        self.cwd = cwd
        self.on_event = on_event
        self.settings = load_settings(cwd)
        self.gate: Gate = build_gate(
            self.settings,
            cwd,
            options.permission_mode,
            split_rules(options.allowed_tools),
            split_rules(options.disallowed_tools),
            prompter=prompter,
            on_notice=lambda text: on_event(Notice(text)),
        )
        self._model = model
        self.registry = builtin_tools()
        self.model_name = resolve_model(options.model, self.settings)
        self.context = SessionContext(cwd, self.model_name, options.append_system_prompt)
        self.context.attach(self.registry, self.gate)
        self.agent = self._new_agent()
        self.id = str(uuid.uuid4())

    @property
    def model_info(self) -> ModelInfo:
        return model_info(self.agent.config.model, self.settings.get("models"))

    def send(self, text: str) -> RunResult:
        """One user message (a /command is expanded first) through the loop to the final answer."""
        return self.run(self.prepare(text))

    def prepare(self, text: str) -> PreparedMessage:
        """Expand a /command and add due reminders; raises UsageError for an unknown command."""
        return self.context.prepare(text, self.agent.ctx)

    def run(self, prepared: PreparedMessage) -> RunResult:
        config = self.agent.config
        session_model = config.model
        if prepared.model:
            config.model = prepared.model
        try:
            with self.context.turn(prepared):
                return self.agent.run(prepared.content)
        finally:
            config.model = session_model

    def set_model(self, name: str) -> None:
        self.model_name = name
        self.agent.config = self._config(name)

    def clear(self) -> None:
        """A new conversation: no messages, reminders sent afresh, a new session id."""
        self.context = SessionContext(self.cwd, self.model_name, self.options.append_system_prompt)
        self.registry = self.registry.without(["Skill"])
        self.context.attach(self.registry, self.gate)
        self.agent = self._new_agent()
        self.id = str(uuid.uuid4())

    def _new_agent(self) -> Agent:
        if self._model is None:
            from agentcli.providers.anthropic import AnthropicModel

            self._model = AnthropicModel()
        return Agent(
            model=self._model,
            executor=ToolExecutor(self.registry, self.gate),
            config=self._config(self.model_name),
            system=self.context.system,
            on_event=self.on_event,
            ctx=ToolContext(cwd=self.cwd),
        )

    def _config(self, name: str) -> LoopConfig:
        info = model_info(name, self.settings.get("models"))
        budget = self.options.max_budget_tokens or self.settings.get("tokenBudget") or LoopConfig.token_budget
        return LoopConfig(
            model=name,
            max_output_tokens=min(32_000, info.max_output_tokens),
            model_max_output_tokens=info.max_output_tokens,
            max_turns=self.options.max_turns,
            token_budget=budget,
            retry_base_delay=float(os.environ.get("AGENTCLI_RETRY_BASE_DELAY") or LoopConfig.retry_base_delay),
        )

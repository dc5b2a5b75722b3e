"""The interactive REPL: read a message, run the loop with live output, repeat.

While the prompt waits, what other threads print (a hook, an MCP server) goes above it
(`patch_stdout`), never into the line being typed.

The prompt is on screen before what only a turn needs is imported (the HTTP client and SDK
the provider sends with, the answer renderer): that loads in a background thread from the
first paint on, while the user types (`repl.warmup`).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout
from prompt_toolkit.utils import is_dumb_terminal
from rich.console import Console

from agentcli import __version__
from agentcli.context.memory import memory_note
from agentcli.context.session import parse_command
from agentcli.errors import AgentcliError, Halt, ModelAPIError
from agentcli.mcp.content import PREFIX as MCP_PREFIX
from agentcli.providers import KEY_HELPER_SETTING, credential_problem
from agentcli.repl.builtins import BUILTINS, ExitRepl, ask, show_resumed
from agentcli.repl.completion import PromptCompleter
from agentcli.repl.idle import IDLE_MESSAGE, IDLE_SETTING, IDLE_TYPE, IdleWatch, idle_threshold
from agentcli.repl.input import prompt_session
from agentcli.repl.keys import EscWatcher
from agentcli.repl.memory import add_memory
from agentcli.repl.prompter import TerminalPrompter
from agentcli.repl.view import TurnView
from agentcli.repl.warmup import start_warm_up
from agentcli.session import Session, SessionOptions
from agentcli.settings import agentcli_home
from agentcli.ui.status import Status
from agentcli.ui.tool_render import ApiErrorLine

SKILL_LIST_MAX_AGE = 2.0
"""Seconds a read of the skill files serves completion before it is read again."""
EXIT_HINT = "Press Ctrl-C again (or Ctrl-D) to exit."


class Repl:
    def __init__(self, options: SessionOptions, cwd: Path, *, verbose: bool = False) -> None:
        self.cwd = cwd
        self.verbose = verbose
        self.started = time.monotonic()
        self.console = Console(highlight=False)
        self.view = TurnView(self.console, cwd, status=self._status)
        self._watcher: EscWatcher | None = None
        prompter = TerminalPrompter(self.console, lambda: self._watcher, self.view.asking)
        self.session = Session(
            options,
            cwd,
            self.view,
            prompter=prompter,
            approve_outside=prompter.approve_outside_files,
            approve_hooks=prompter.approve_project_hooks,
            approve_mcp_server=prompter.approve_mcp_server,
            ask_user=prompter,
            elicitor=prompter.elicit,
        )
        self.view.current_task = lambda: self.session.context.todos.current()
        self.prompt: PromptSession[str] = prompt_session(
            agentcli_home() / "history",
            PromptCompleter(self._commands, cwd),
            self._status,
            self._cycle_mode,
            self.view.expand_last_result,
        )
        self.last_context_tokens = self.session.agent.context_tokens
        """The conversation's size in the toolbar (as of the last response or compaction)."""
        self._typeahead = ""
        """Keys typed while the last turn ran: they start the next prompt's line."""
        self._skill_list: list[tuple[str, str]] = []
        self._skills_read_at = float("-inf")
        self._warming_up = False
        self.prompt.app.after_render += lambda app: self._warm_up()
        self._idle: IdleWatch | None = None
        """Runs the Notification hooks (`idle_prompt`) when the prompt waits long after an answer."""
        try:
            self._idle = self._idle_watch()
        except BaseException:  # a bad idleNotificationSeconds: the session made above is closed
            self.session.close()
            raise

    def _idle_watch(self) -> IdleWatch | None:
        """None when no Notification hook would hear of it (nothing to watch)."""
        session = self.session
        if not session.hooks.config.matching("Notification", IDLE_TYPE):
            return None
        threshold = idle_threshold(session.settings.get(IDLE_SETTING), session.settings.sources.get(IDLE_SETTING))
        watch = IdleWatch(threshold, self._notify_idle)
        self.prompt.default_buffer.on_text_changed += lambda buffer: watch.typed()
        return watch

    def _notify_idle(self) -> None:
        fields = {"message": IDLE_MESSAGE, "notification_type": IDLE_TYPE}
        self.session.hooks.run("Notification", fields, IDLE_TYPE)

    def _warm_up(self) -> None:
        """Start the warm-up and the MCP servers once the prompt is first on screen, so neither
        delays drawing it."""
        if not self._warming_up:
            self._warming_up = True
            start_warm_up(self.session.provider)
            self.session.mcp.start()

    # ------------------------------------------------------------------ main loop

    def loop(self) -> int:
        self.console.print(f"[bold]agentcli[/bold] {__version__} · {self.cwd} · /help for commands", style="dim")
        if problem := credential_problem(
            self.session.provider, key_helper=self.session.settings.get(KEY_HELPER_SETTING)
        ):
            self.console.print(f"! {problem} /help works without one.", style="yellow", markup=False)
        show_resumed(self)
        if is_dumb_terminal():  # prompt_toolkit then prints a plain prompt, which has no render events
            self._warm_up()
        armed_exit = False
        while True:
            if self._idle is not None:
                self._idle.waiting()
            try:
                with patch_stdout(raw=True):  # what other threads print meanwhile goes above the prompt
                    text = self.prompt.prompt("> ", default=self._typeahead)
            except Halt:
                raise
            except KeyboardInterrupt:
                self._typeahead = ""
                if armed_exit:
                    return 0
                armed_exit = True
                self.console.print(EXIT_HINT, style="dim")
                continue
            except EOFError:
                return 0
            finally:
                if self._idle is not None:
                    self._idle.busy()
            armed_exit = False
            self._typeahead = ""
            if not text.strip():
                continue
            try:
                self.handle(text)
            except ExitRepl:
                return 0

    def prefill(self, text: str) -> None:
        """Start the next prompt's line with `text` (the prompt of a turn rewound)."""
        self._typeahead = text

    def handle(self, text: str) -> None:
        """A built-in command runs here, and `# note` adds to memory; a skill or ordinary text is
        sent; an unknown `/name` is answered with a suggestion and nothing is sent."""
        note = memory_note(text)
        if note is not None:
            try:
                add_memory(self, note, ask)
            except Halt:
                raise
            except (Exception, KeyboardInterrupt) as error:
                self._report(error)
            return
        command = parse_command(text)  # None for text, also for a path such as `/usr/bin/env is missing`
        if command is not None:
            name, args = command
            builtin = BUILTINS.get(name)
            if builtin is not None:
                try:
                    builtin.run(self, args)
                except (ExitRepl, Halt):
                    raise
                except (Exception, KeyboardInterrupt) as error:
                    self._report(error)
                return
            catalog = self.session.context.skills()
            if name not in catalog.names() and not name.startswith(MCP_PREFIX):  # an MCP prompt's errors: prepare
                self.console.print(catalog.unknown(name, list(BUILTINS)), style="yellow", markup=False)
                return
        self.send(text)

    def send(self, text: str) -> None:
        """One user message through the loop, with live output; errors end the turn, not the REPL."""
        try:
            with EscWatcher() as watcher:
                self._watcher = watcher
                self.view.begin(typed=watcher.typed)
                try:
                    self.session.send(text)
                finally:
                    self._typeahead = watcher.typeahead()
        except KeyboardInterrupt as error:
            self.session.record_interrupt()
            if isinstance(error, Halt):
                raise
            self._report(error)
        except Exception as error:
            self._report(error)
        finally:
            self._watcher = None
            if self._idle is not None:
                self._idle.answered()
            self.view.end()
            self.last_context_tokens = self.session.agent.context_tokens

    def _report(self, error: BaseException) -> None:
        """One readable line for what ended a turn or a command; a traceback only with --verbose."""
        self.view.end()
        if isinstance(error, KeyboardInterrupt):
            self.view.interrupted()
        elif isinstance(error, ModelAPIError):
            self.console.print(ApiErrorLine.from_error(error))
        elif isinstance(error, AgentcliError):
            self.console.print(str(error), style="red", markup=False)
        else:  # a bug of ours must not end the session
            if self.verbose:
                self.console.print(traceback.format_exc(), markup=False)
            self.console.print(f"Internal error: {type(error).__name__}: {error}", style="red", markup=False)

    # ---------------------------------------------------------------- prompt bits

    def _commands(self) -> Iterable[tuple[str, str]]:
        """Built-ins, then skills and MCP prompts. Completion asks on every key press, so the skill files are
        re-read at most every couple of seconds rather than each time."""
        now = time.monotonic()
        if now - self._skills_read_at > SKILL_LIST_MAX_AGE:
            try:
                catalog = self.session.context.skills()
                shown = ((catalog.shown_name(skill), skill.description) for skill in catalog.user_invocable())
                self._skill_list = [(name, description) for name, description in shown if name not in BUILTINS]
            except AgentcliError:
                self._skill_list = []
            self._skills_read_at = now
        yield from ((b.name, b.description) for b in BUILTINS.values())
        yield from self._skill_list
        for name, command in sorted(self.session.mcp_content.prompts().items()):  # cached per connection
            yield name, command.prompt.description or f"MCP prompt of {command.server}"

    def _status(self) -> Status:
        """For the toolbar, and under the spinner while a turn runs (then the context is as of
        the turn's latest response)."""
        session = self.session
        info = session.model_info
        working = self._watcher is not None
        return Status(
            model=session.agent.model_name if working else session.model_name,  # opusplan: the mode's, once idle
            mode=session.gate.mode,
            context_tokens=session.agent.context_tokens if working else self.last_context_tokens,
            context_window=info.context_window,
            cost_usd=session.cost_usd(session.usage),
        )

    def _cycle_mode(self) -> None:
        self.session.gate.cycle_mode()

    def close(self, reason: str) -> None:
        """Stop watching for idleness and close the session (`reason`: the SessionEnd hooks')."""
        if self._idle is not None:
            self._idle.close()
        self.session.close(reason)


def run_repl(options: SessionOptions, *, verbose: bool = False) -> int:
    """Start the REPL in the current directory; returns the exit code."""
    try:
        repl = Repl(options, Path.cwd(), verbose=verbose)
    except AgentcliError as error:
        Console(stderr=True).print(str(error), style="red", markup=False)
        return error.exit_code
    reason = "other"
    try:
        code = repl.loop()
        reason = "prompt_input_exit"  # /exit or Ctrl-D at the prompt: the SessionEnd hooks' reason
        return code
    except Halt as stop:  # the turn was stopped as by Ctrl-C; nothing more is shown
        return stop.exit_code
    finally:
        repl.close(reason)

"""The harnesses `bench/run` compares: agentcli, Claude Code and mini-swe-agent.

Each is a `Harness`: how to start it (version, help, a one-shot prompt, an interactive session),
the environment it needs to talk to the fake server, and how the benchmark's scripted session
reads in its own tools (agentcli and Claude Code: Read, Grep, Bash; mini-swe-agent: bash only,
so a Read is `sed -n`, a Grep is `grep -r`). The peers are installed here, under bench/.peers/:
Claude Code from npm (`@anthropic-ai/claude-code`), mini-swe-agent from PyPI in its own venv.
`AGENTCLI_BENCH_CLAUDE` / `AGENTCLI_BENCH_MINI` name an existing executable instead. A peer that
cannot be installed is a `Harness` whose `status` says why; it is reported, never dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import AGENTCLI, ROOT
from tests.fake_anthropic import RecordedRequest, Reply, ToolUseBlock, reply, text, tool_use

PEERS_DIR = Path(os.environ.get("AGENTCLI_BENCH_PEERS", ROOT / "bench" / ".peers"))
MODEL = "claude-sonnet-5-5"
"""The model every harness is told to use, so one price table prices them all."""
DONE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-swe-agent ends a task when the model runs `echo` of this."""

Step = tuple[str, dict[str, Any]]
"""One step of a scripted session, harness-neutral: ("read", {path, offset?, limit?}),
("grep", {pattern, output_mode}) or ("bash", {command})."""


@dataclass
class Harness:
    name: str
    status: str = "ok"
    """"ok", or why it is not measured ("not installed: …", "skipped: --no-peers")."""
    version: str | None = None
    version_argv: list[str] | None = None
    help_argv: list[str] | None = None
    prompt_argv: Callable[[str, Path], list[str]] | None = None
    """argv of a one-shot run of a prompt in a project folder (the session may take many steps)."""
    repl_argv: list[str] | None = None
    repl_ready: str = ""
    """Text on screen once the interactive prompt is painted and takes keys."""
    repl_submit: tuple[str, ...] = ("Enter",)
    """The keys (tmux names) that send what was typed."""
    env: dict[str, str] = field(default_factory=dict)
    tool_call: Callable[[Step, Path], ToolUseBlock] | None = None
    finish: Callable[[str], Reply] = lambda answer: reply(text(answer))

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def main_conversation(self, request: RecordedRequest) -> bool:
        """Whether `request` is a step of the session (Claude Code also sends side requests without tools)."""
        return bool(request.body.get("tools"))


def claude_style_call(step: Step, project: Path) -> ToolUseBlock:
    kind, args = step
    if kind == "read":
        return tool_use(
            "Read", {**{k: v for k, v in args.items() if k != "path"}, "file_path": str(project / args["path"])}
        )
    if kind == "grep":
        return tool_use("Grep", dict(args))
    return tool_use("Bash", dict(args))


def bash_only_call(step: Step, project: Path) -> ToolUseBlock:
    kind, args = step
    if kind == "read":
        first = args.get("offset", 1)
        last = first + args["limit"] - 1 if "limit" in args else "$"
        return tool_use("bash", {"command": f"sed -n '{first},{last}p' {args['path']}"})
    if kind == "grep":
        flag = {"content": "-rn", "count": "-rc", "files_with_matches": "-rl"}[
            args.get("output_mode", "files_with_matches")
        ]
        return tool_use("bash", {"command": f"grep {flag} '{args['pattern']}' ."})
    return tool_use("bash", dict(args))


def agentcli() -> Harness:
    return Harness(
        name="agentcli",
        version=_first_line([AGENTCLI, "--version"]),
        version_argv=[AGENTCLI, "--version"],
        help_argv=[AGENTCLI, "--help"],
        prompt_argv=lambda prompt, _: [
            AGENTCLI,
            "run",
            prompt,
            "--model",
            MODEL,
            "--allowed-tools",
            "Bash",
            "--max-turns",
            "400",
        ],
        repl_argv=[AGENTCLI, "--model", MODEL],
        repl_ready="(shift-tab)",
        tool_call=claude_style_call,
    )


def claude_code(install: bool) -> Harness:
    name = "Claude Code"
    binary, status = _located(install, _claude_binary)
    if binary is None:
        return Harness(name, status=status)
    flags = ["--model", MODEL, "--allowedTools", "Read Grep Bash", "--max-turns", "400"]
    return Harness(
        name=name,
        version=_first_line([binary, "--version"]),
        version_argv=[binary, "--version"],
        help_argv=[binary, "--help"],
        prompt_argv=lambda prompt, _: [binary, "-p", prompt, *flags],
        repl_argv=[binary, "--model", MODEL],
        repl_ready="? for shortcuts",
        env={"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
        tool_call=claude_style_call,
    )


def mini_swe_agent_python(install: bool) -> tuple[str | None, str]:
    """The interpreter of mini-swe-agent's own venv (made under bench/.peers/ when missing), or
    None and the harness's status saying why."""
    mini, status = _located(install, _mini_binary)
    return (str(Path(mini).parent / "python") if mini is not None else None), status


def mini_swe_agent(install: bool) -> Harness:
    name = "mini-swe-agent"
    python, status = mini_swe_agent_python(install)
    if python is None:
        return Harness(name, status=status)
    mini = str(Path(python).parent / "mini")
    # --cost-limit 0: no limit (its default, $3, ended the 200-step session after 118 requests)
    model = ["-m", f"anthropic/{MODEL}", "--cost-limit", "0"]
    return Harness(
        name=name,
        version=_first_line([python, "-c", "import importlib.metadata as m; print(m.version('mini-swe-agent'))"]),
        help_argv=[mini, "--help"],
        prompt_argv=lambda prompt, folder: [
            mini,
            *model,
            "-t",
            prompt,
            "-y",
            "--exit-immediately",
            "-o",
            str(folder / "traj.json"),
        ],
        repl_argv=[mini, *model, "-y"],
        repl_ready="What do you want to do?",
        repl_submit=("M-Enter",),  # its prompt is multi-line: Enter is a new line; Escape, Enter as one key
        env={
            "MSWEA_CONFIGURED": "true",  # no first-run set-up questions
            "MSWEA_COST_TRACKING": "ignore_errors",  # litellm has no price for the fake's model
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of litellm's price list
        },
        tool_call=bash_only_call,
        finish=lambda answer: reply(text(answer), tool_use("bash", {"command": f"echo {DONE}"})),
    )


def _located(install: bool, find: Callable[[], tuple[str | None, str]]) -> tuple[str | None, str]:
    """The peer's executable as `find` finds or installs it, or None and the harness's status saying why."""
    if not install:
        return None, "skipped: --no-peers"
    executable, problem = find()
    return (executable, "ok") if executable is not None else (None, f"not installed: {problem}")


def _chosen(variable: str) -> tuple[str | None, str] | None:
    """The executable named by environment `variable` (or why it is unusable); None when it is not set."""
    chosen = os.environ.get(variable)
    if not chosen:
        return None
    return (chosen, "") if Path(chosen).exists() else (None, f"{variable}={chosen} does not exist")


def _claude_binary() -> tuple[str | None, str]:
    if (chosen := _chosen("AGENTCLI_BENCH_CLAUDE")) is not None:
        return chosen
    folder = PEERS_DIR / "claude-code"
    binary = folder / "node_modules" / ".bin" / "claude"
    if binary.exists():
        return str(binary), ""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm not found (install Node.js and npm)"
    print("installing Claude Code from npm into bench/.peers/claude-code …", file=sys.stderr, flush=True)
    folder.mkdir(parents=True, exist_ok=True)
    done = _quiet([npm, "install", "--prefix", str(folder), "--no-fund", "--no-audit", "@anthropic-ai/claude-code"])
    if not binary.exists():
        return None, f"npm install @anthropic-ai/claude-code failed: {done}"
    return str(binary), ""


def _mini_binary() -> tuple[str | None, str]:
    if (chosen := _chosen("AGENTCLI_BENCH_MINI")) is not None:
        return chosen
    venv = PEERS_DIR / "mini-swe-agent"
    mini = venv / "bin" / "mini"
    if mini.exists():
        return str(mini), ""
    print("installing mini-swe-agent from PyPI into bench/.peers/mini-swe-agent …", file=sys.stderr, flush=True)
    made = _quiet([sys.executable, "-m", "venv", str(venv)])
    if made:
        return None, f"python -m venv failed: {made}"
    done = _quiet([str(venv / "bin" / "pip"), "install", "-q", "mini-swe-agent"])
    if not mini.exists():
        return None, f"pip install mini-swe-agent failed: {done}"
    return str(mini), ""


def _quiet(argv: list[str]) -> str:
    """Run an install step; "" when it worked, else the end of what it printed."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    return "" if done.returncode == 0 else (done.stderr or done.stdout).strip()[-300:]


def _first_line(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except OSError:
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else None

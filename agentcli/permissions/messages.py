"""What the model and the user are told when a call does not run (and why a question is asked).

The first line of every denial is complete on its own: the terminal's progress line
shows only that line; the lines after it are advice for the model.
"""

from __future__ import annotations

import json
import shlex

from agentcli.mcp.names import split_name
from agentcli.permissions.evaluate import Call, Verdict
from agentcli.permissions.rules import SESSION, Rule, RuleError, parse_rule
from agentcli.permissions.suggest import Suggestion, naming_rules

MAX_SHOWN = 160
MAX_ARGUMENTS = 2000
DO_NOT_RETRY = "Do not retry the same call: it would be denied again. Go on without it, or tell the user what you need."


def describe(call: Call) -> str:
    """`the Bash command `ls``, `Edit of src/a.py`, `Read of /etc/hosts (outside the project)`."""
    if call.kind == "bash":
        return f"the Bash command `{one_line(call.command)}`"
    if call.paths:
        shown = ", ".join(call.shown(p) for p in call.real_paths)
        where = " (outside the project)" if call.outside else ""
        return f"{call.tool} of {shown}{where}"
    return call.tool


def mcp_call(call: Call) -> str:
    """An MCP call's server, tool and arguments for the question, the server and tool as configured
    and listed (the arguments as JSON, cut at MAX_ARGUMENTS characters):
    `server demo · tool echo\narguments: {"text": "hi"}`."""
    server, tool = (call.origin.server, call.origin.tool) if call.origin else split_name(call.tool) or ("", "")
    arguments = json.dumps(call.tool_input, ensure_ascii=False)
    if len(arguments) > MAX_ARGUMENTS:
        arguments = arguments[: MAX_ARGUMENTS - 1] + "…"
    return f"server {server} · tool {tool}\narguments: {arguments}"


def one_line(text: str) -> str:
    flat = " ⏎ ".join(line.strip() for line in text.strip().splitlines())
    return flat if len(flat) <= MAX_SHOWN else flat[: MAX_SHOWN - 1] + "…"


def source_of(rule: Rule) -> str:
    return rule.source.label if rule.source.scope in ("flag", "session") else f"settings file {rule.source.label}"


def denied_by_rule(call: Call, rule: Rule, unverified: str | None = None) -> str:
    if unverified:
        return (
            f'Permission denied: {describe(call)} could not be verified against the deny rule "{rule.text}" in '
            f"{source_of(rule)} ({unverified}), so it counts as matching it.\n"
            "If the command has nothing to do with that rule, write it so every program it runs is named "
            "plainly: no variable, substitution, eval, source or shell string in command position."
        )
    return (
        f'Permission denied by the deny rule "{rule.text}" in {source_of(rule)}: {describe(call)} may not run.\n'
        "Deny rules cannot be overridden; do not try to reach the same result another way."
    )


def plan_refusal(call: Call, interactive: bool) -> str:
    how = "the user can switch modes with Shift-Tab" if interactive else "use another --permission-mode"
    return (
        f"{_capital(describe(call))} was not run: the session is in plan mode (read-only), which refuses "
        f"anything that changes files or runs commands (to allow it, {how}).\n"
        "Keep investigating with read-only tools, then present your plan with ExitPlanMode."
    )


NON_INTERACTIVE = "this run is non-interactive"
DONT_ASK = "the session is in dontAsk mode, which denies what it would ask about"


def non_interactive(
    call: Call, verdict: Verdict, suggestion: Suggestion | None, nobody_asked: str = NON_INTERACTIVE
) -> str:
    """A denial for a call that would need the user's answer where nobody is asked (`nobody_asked`
    says why: a run that cannot ask, or dontAsk mode)."""
    what = describe(call)
    if verdict.rule is not None:
        rule = verdict.rule
        how = "could not be verified against" if verdict.unverified else "matches"
        why = f" ({verdict.unverified})" if verdict.unverified else ""
        return (
            f'Permission denied: {what} {how} the ask rule "{rule.text}" in {source_of(rule)}{why}, so it needs the '
            + (
                "user's confirmation, which a non-interactive run cannot give"
                if nobody_asked == NON_INTERACTIVE
                else f"user's confirmation, and {nobody_asked}"
            )
            + "; remove that ask rule to let it run.\n"
            + DO_NOT_RETRY
        )
    if verdict.protected:
        rules = naming_rules(call, verdict)
        allow = (
            f"To allow it, pass --allowed-tools {_shell_quote(','.join(rules))}: only a rule that names the path "
            "allows it, never a mode."
            if rules
            else "Only a rule that names the exact command could allow it."
        )
        return (
            f"Permission denied: {what} writes {protected_summary(verdict, call)}, which is asked about every "
            f"time, and {nobody_asked}. {allow}\n{DO_NOT_RETRY}"
        )
    how = _how_to_allow(call, verdict, suggestion)
    return f"Permission denied: {what} needs approval, and {nobody_asked}. {how}\n{DO_NOT_RETRY}"


def _how_to_allow(call: Call, verdict: Verdict, suggestion: Suggestion | None) -> str:
    flag = f"--allowed-tools {_shell_quote(','.join(suggestion.rules))}" if suggestion else None
    outside = call.outside_of(verdict.uncovered_paths)
    if call.kind == "edit" and not outside:
        options = ["--permission-mode acceptEdits", flag] if flag else ["--permission-mode acceptEdits"]
        return f"To allow it, pass {' or '.join(options)}."
    if outside and flag:
        return (
            f"Paths outside the project are never approved by a mode; to allow it, pass {flag} "
            "(or --permission-mode bypassPermissions)."
        )
    if flag:
        return f"To allow it, pass {flag} (or --permission-mode bypassPermissions)."
    everything = f"--allowed-tools {call.tool}" if call.kind == "bash" else None
    options = [o for o in (everything, "--permission-mode bypassPermissions") if o]
    return f"No narrower rule can allow it; only {' or '.join(options)} would."


def interrupted(call: Call) -> str:
    """A call that was waiting to be asked about when the user interrupted the turn."""
    return f"Not run: the user interrupted the turn before {describe(call)} was asked about."


def user_denied(call: Call, reason: str) -> str:
    head = f"The user denied permission for {describe(call)}; it did not run."
    if reason.strip():
        return f"{head}\nThe user said: {reason.strip()}\nAdjust your approach to what the user said."
    return f"{head}\nStop and ask the user how to proceed; do not retry it."


def hook_denied(call: Call, message: str) -> str:
    """A call a PermissionRequest hook denied in the user's place."""
    why = f": {message.strip()}" if message.strip() else "."
    return f"Permission denied by a PermissionRequest hook for {describe(call)}{why}\n" + DO_NOT_RETRY


def hook_asks_non_interactive(call: Call, reason: str) -> str:
    """A denial for a call a PreToolUse hook wants the user to confirm, in a run that cannot ask."""
    why = f" ({reason})" if reason else ""
    return (
        f"Permission denied: a PreToolUse hook asks the user to confirm {describe(call)}{why}, which a "
        "non-interactive run cannot do.\n" + DO_NOT_RETRY
    )


def ask_reason(call: Call, verdict: Verdict, suggestion: Suggestion | None = None) -> str:
    """Why the user is being asked, for the permission prompt (whose option 2 is "don't ask again")."""
    if verdict.rule is not None:
        if verdict.unverified:
            return (
                f'It could not be verified against the ask rule "{verdict.rule.text}" in '
                f"{source_of(verdict.rule)}: {verdict.unverified}."
            )
        return f'It matches the ask rule "{verdict.rule.text}" in {source_of(verdict.rule)}.'
    if verdict.protected:
        return f"It writes {protected_summary(verdict, call)}. Such files are asked about every time, in every mode."
    outside = call.outside_of(verdict.uncovered_paths)
    if outside:
        return f"It touches {', '.join(str(p) for p in outside)}, outside the project."
    if verdict.hosts:
        return f"It contacts {', '.join(verdict.hosts)} over the network."
    if call.kind == "bash" and verdict.coverage is not None and verdict.coverage.uncovered is None:
        return "The command could not be fully analysed, so no rule can cover it."
    risky = [p for p in (verdict.coverage.uncovered or ()) if p.risky_flag] if verdict.coverage else []
    if risky:
        flag = risky[0].risky_flag
        return f"It uses {flag}, which prefix rules do not cover; only a rule naming the exact command does."
    habit = ASKS_BEFORE.get(call.kind, ASKS_BEFORE["other"])
    if suggestion is None:
        return f"agentcli asks before {habit}."
    allowed = " and ".join(_in_words(rule) for rule in suggestion.rules)
    when = "from now on" if suggestion.scope == "local" else "for the rest of this session"
    return f"agentcli asks before {habit}; choose 2 to allow {allowed} {when}."


ASKS_BEFORE = {
    "bash": "running commands",
    "edit": "changing files (Shift-Tab at the prompt accepts all edits)",
    "read": "reading files outside the project",
    "mcp": "using the tools of MCP servers",
    "other": "using tools that do not say what they do, or that reach the network",
}
"""What agentcli asks about when no rule decides, by kind of call."""


def _in_words(rule_text: str) -> str:
    """`Bash(git status:*)` → "`git status …`"; `Edit(./src/**)` → "edits in ./src/"; else the rule."""
    try:
        rule = parse_rule(rule_text, "allow", SESSION)
    except RuleError:
        return rule_text
    if rule.bash is not None:
        return f"`{shlex.join(rule.bash.words)}{' …' if rule.bash.prefix else ''}`"
    if rule.path is not None:
        what = "edits" if rule.tool == "Edit" else "reads"
        if rule.path.text == "./**":
            return f"{what} anywhere in the project"
        if rule.path.text.endswith("/**"):
            return f"{what} in {rule.path.text[:-2]}"
        return f"{what} of {rule.path.text}"
    return rule_text


def protected_summary(verdict: Verdict, call: Call) -> str:
    """`.git/config (it can make git run programs …)`; several paths with the same reason share it."""
    by_reason: dict[str, list[str]] = {}
    for item in verdict.protected:
        by_reason.setdefault(item.reason, []).append(call.shown(item.path))
    return "; ".join(f"{', '.join(paths)} ({reason})" for reason, paths in by_reason.items())


def _shell_quote(value: str) -> str:
    """Quoted so the hint can be pasted into a shell."""
    if value.replace("_", "").isalnum():
        return value
    if not set(value) & set('"$`\\!'):
        return f'"{value}"'
    return shlex.quote(value)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]

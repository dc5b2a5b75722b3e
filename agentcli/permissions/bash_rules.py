"""Bash rules matched against a parsed command, never against its raw text.

Allow rules and deny/ask rules fail in opposite directions on purpose:

- *allow* (`covers`): every simple command in the line must be matched by a rule, and a
  part only counts if it is plain — no command or process substitution, no env-prefix
  assignment, no redirection that writes a file, no construct the parser does not know.
  Anything the parser cannot read is not covered (the user is asked, or the call denied).
- *deny/ask* (`mentions`): any command anywhere — inside `$(…)`, a subshell, a function,
  behind `env`/`sudo`/`xargs`, inside `bash -c '…'` — that matches the rule counts; when
  the parser is unsure, a cruder token scan is added so the rule still catches it.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

UNSAFE_TEXT = ("`", "$(", "<(", ">(")
"""Substitutions; if any appears anywhere (even quoted), no part is plain."""

_EXPANDING = set("$`*?[{")
"""Characters that may expand a word (a rule's words only match words without them)."""
_BARE_STAR = re.compile(r"(^|\s)\*(\s|$)")
_SIMPLE_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")
_FD = re.compile(r"[0-9]+|-")
_WRITING_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
_NULL_DEVICE = "/dev/null"

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "fish"}
WRAPPERS = {
    "env", "command", "builtin", "exec", "nohup", "time", "nice", "ionice", "sudo", "doas",
    "xargs", "timeout", "stdbuf", "setsid", "chrt", "taskset", "unbuffer", "caffeinate",
}  # fmt: skip
"""Commands that run their arguments as another command (deny rules look behind them)."""


class BashRuleError(ValueError):
    """A Bash rule specifier that cannot be understood."""


@dataclass(frozen=True)
class BashPattern:
    """The specifier of a `Bash(...)` rule: exact command words, or a word prefix (`:*`)."""

    words: tuple[str, ...]
    prefix: bool
    text: str
    """The command as written in the rule (exact rules also match this string verbatim)."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command of a command line, as the shell will see it."""

    words: tuple[str, ...]
    """Words after quote removal (`ec"ho" hi` → echo, hi)."""
    text: str
    """The command's own source text."""
    literal: int
    """How many leading words can expand to nothing but themselves (no $, glob, brace, ~)."""
    plain: bool
    """No assignment, substitution, file-writing redirection or unknown construct."""


@dataclass(frozen=True)
class Coverage:
    covered: bool
    uncovered: tuple[SimpleCommand, ...] | None
    """The parts no rule covers; None when the command could not be analysed."""


def parse_bash_specifier(spec: str) -> BashPattern | None:
    """`git diff:*` / `git diff *` → prefix; `npm run build` → exact; `*` → None (every command)."""
    text = spec.strip()
    if text == "*":
        return None
    prefix = text.endswith((":*", " *"))
    body = text[:-2] if prefix else text
    if ":*" in body:
        raise BashRuleError("`:*` may only end the rule, as in Bash(git diff:*)")
    try:
        words = tuple(shlex.split(body))
    except ValueError as error:
        raise BashRuleError(f"cannot split the command into words: {error}") from None
    if not words:
        raise BashRuleError("no command before the wildcard")
    if _BARE_STAR.search(body):
        raise BashRuleError("a wildcard may only end the rule, as in Bash(git diff:*) or Bash(git diff *)")
    if prefix and body != body.rstrip():
        raise BashRuleError("write the prefix without trailing spaces, as in Bash(git diff:*)")
    return BashPattern(words, prefix, text)


# ------------------------------------------------------------------------- parsing


def parse_parts(command: str) -> list[SimpleCommand] | None:
    """The simple commands a line runs at top level, or None if it cannot be analysed.

    Lists (`;` `&&` `||` `&` newlines), pipelines, `( … )` subshells and `{ …; }` groups are
    looked through; other compound commands (if/for/while/case/functions) are not analysed.
    """
    trees = _parse(command)
    if not trees:
        return None
    parts: list[SimpleCommand] = []
    try:
        if not all(_collect(tree, command, parts) for tree in trees):
            return None
    except RecursionError:  # absurdly deep nesting: not analysable
        return None
    if any(marker in command for marker in UNSAFE_TEXT):
        parts = [replace(p, plain=False) for p in parts]
    return parts or None


def _parse(command: str) -> list[Any] | None:
    if "\0" in command:
        return None
    try:
        import bashlex  # type: ignore[import-untyped]

        trees = bashlex.parse(command)
    except Exception:  # bashlex raises many types (ParsingError, NotImplementedError, …)
        return None
    if not isinstance(trees, list) or not all(hasattr(t, "kind") for t in trees):
        return None
    return trees


def _collect(node: Any, source: str, out: list[SimpleCommand]) -> bool:
    kind = node.kind
    if kind == "command":
        out.append(_simple(node, source))
        return True
    if kind == "list":
        return all(_collect(p, source, out) for p in node.parts if p.kind != "operator")
    if kind == "pipeline":
        return all(
            _collect(p, source, out)
            for p in node.parts
            if p.kind != "pipe" and not (p.kind == "reservedword" and p.word == "!")
        )
    if kind == "compound":
        items = node.list
        opener = items[0] if items else None
        if opener is None or opener.kind != "reservedword" or opener.word not in ("(", "{"):
            return False
        if source[node.pos[0] : node.pos[0] + 2] == "((":  # arithmetic, not a subshell
            return False
        if not all(_safe_redirect(r) for r in node.redirects):
            return False
        return all(_collect(i, source, out) for i in items if i.kind != "reservedword")
    return False


def _simple(node: Any, source: str) -> SimpleCommand:
    words: list[str] = []
    literal, counting, plain = 0, True, True
    for part in node.parts:
        if part.kind == "word":
            words.append(part.word)
            plain = plain and all(_safe_expansion(p) for p in part.parts)
            raw = source[part.pos[0] : part.pos[1]]
            if counting and not part.parts and not _EXPANDING.intersection(raw) and not raw.startswith("~"):
                literal += 1
            else:
                counting = False
        elif part.kind == "redirect":
            plain = plain and _safe_redirect(part)
        else:  # an assignment (FOO=1 cmd) or something unknown
            plain = False
    text = source[node.pos[0] : node.pos[1]]
    return SimpleCommand(tuple(words), text, literal, plain and bool(words))


def _safe_expansion(node: Any) -> bool:
    if node.kind == "tilde":
        return True
    return node.kind == "parameter" and _SIMPLE_PARAMETER.fullmatch(node.value) is not None


def _safe_word(node: Any) -> bool:
    return node is not None and getattr(node, "kind", None) == "word" and all(_safe_expansion(p) for p in node.parts)


def _safe_redirect(node: Any) -> bool:
    kind, target = node.type, node.output
    if kind in (">&", "<&"):  # fd duplication is fine; `>& file` writes a file
        return isinstance(target, int) or (
            _safe_word(target) and not target.parts and _FD.fullmatch(target.word) is not None
        )
    if kind in ("<", "<<<"):
        return _safe_word(target)
    if kind in ("<<", "<<-"):
        body = getattr(getattr(node, "heredoc", None), "value", None)
        return isinstance(body, str) and "$" not in body and "`" not in body
    if kind in _WRITING_REDIRECTS:
        return _safe_word(target) and not target.parts and target.word == _NULL_DEVICE
    return False


# ------------------------------------------------------------------- allow rules


def covers(command: str, patterns: Sequence[BashPattern]) -> Coverage:
    """Whether allow rules `patterns` together cover every part of `command`."""
    stripped = command.strip()
    if any(not p.prefix and p.text == stripped for p in patterns):
        return Coverage(True, ())
    parts = parse_parts(command)
    if parts is None:
        return Coverage(False, None)
    uncovered = tuple(p for p in parts if not any(part_covered(p, pattern) for pattern in patterns))
    return Coverage(not uncovered, uncovered)


def part_covered(part: SimpleCommand, pattern: BashPattern) -> bool:
    n = len(pattern.words)
    if not part.plain or part.literal < n or part.words[:n] != pattern.words:
        return False
    return pattern.prefix or len(part.words) == n


# --------------------------------------------------------------- deny/ask rules


def mentions(command: str, pattern: BashPattern, depth: int = 0) -> bool:
    """Whether any command anywhere in `command` matches `pattern` (for deny and ask rules)."""
    if not pattern.prefix and command.strip() == pattern.text:
        return True
    trees = _parse(command)
    word_lists: list[list[str]] = []
    try:
        for tree in trees or []:
            _all_commands(tree, word_lists)
    except RecursionError:
        trees = None
    if trees is None or "<<" in command or any(m in command for m in UNSAFE_TEXT):
        word_lists.extend(_crude_commands(command))
    return any(_words_mention(words, pattern, depth) for words in word_lists)


def _all_commands(node: Any, out: list[list[str]]) -> None:
    if node.kind == "command":
        out.append([p.word for p in node.parts if p.kind == "word"])
    for attr in ("parts", "list"):
        for child in getattr(node, attr, None) or []:
            if hasattr(child, "kind"):
                _all_commands(child, out)
    for attr in ("command", "output", "body"):
        child = getattr(node, attr, None)
        if hasattr(child, "kind"):
            _all_commands(child, out)


_CRUDE_SPLIT = re.compile(r"\$\(|<\(|>\(|[;&|\n(){}`]")


def _crude_commands(command: str) -> Iterable[list[str]]:
    for segment in _CRUDE_SPLIT.split(command):
        words = segment.replace('"', " ").replace("'", " ").replace("\\", "").split()
        if words:
            yield words


_SKIPPABLE = re.compile(r"-.*|[A-Za-z_][A-Za-z0-9_]*=.*|[0-9]+(\.[0-9]+)?[smhd]?")


def _words_mention(words: list[str], pattern: BashPattern, depth: int) -> bool:
    for i, word in enumerate(words):
        name = os.path.basename(word)
        rest = words[i + 1 :]
        if _starts_with(name, rest, pattern):
            return True
        if depth < 3 and _nested_script_mentions(name, rest, pattern, depth):
            return True
        if name not in WRAPPERS and not _SKIPPABLE.fullmatch(word):
            return False
    return False


def _starts_with(name: str, rest: list[str], pattern: BashPattern) -> bool:
    words = (name, *rest)
    n = len(pattern.words)
    if words[:n] != pattern.words:
        return False
    return pattern.prefix or len(words) == n


def _nested_script_mentions(name: str, rest: list[str], pattern: BashPattern, depth: int) -> bool:
    if name == "eval":
        return mentions(" ".join(rest), pattern, depth + 1)
    if name in SHELLS:
        for j, arg in enumerate(rest[:-1]):
            if arg.startswith("-") and not arg.startswith("--") and "c" in arg:
                return mentions(rest[j + 1], pattern, depth + 1)
    return False

"""Bash rules matched against a parsed command, never against its raw text.

Allow rules and deny/ask rules fail in opposite directions on purpose:

- *allow* (`covers`): every simple command in the line must be matched by a rule, and a
  part only counts if it is plain — no command or process substitution, no env-prefix
  assignment, no redirection that writes a file, no construct the rules do not look
  into — and uses no flag that writes files or runs programs (`bash_flags`) when the rule
  is a prefix. Anything that cannot be read is not covered (the user is asked, or the
  call denied).
- *deny/ask* (`deny_match`): any command anywhere — inside `$(…)`, a subshell, a function,
  a heredoc, behind `env`/`sudo`/`timeout`/`xargs`/`find -exec` (each wrapper's options
  read with its own grammar, see `bash_runners`), inside `bash -c '…'`, `eval` or `trap`
  — that matches the rule counts. When any program the line runs cannot be determined
  statically (a variable or substitution in command position, brace or glob expansion,
  ANSI-C quoting, `source`, a shell reading its input, an option a wrapper does not
  document), the line counts as matching too, with a reason saying why it could not be
  verified. What is out of reach: programs that act without being named (`python -c`,
  a script's own content, a binary copied under another name).
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.permissions.bash_flags import risky_flag
from agentcli.permissions.bash_runners import Code, Opaque, Runs, effects, program_name
from agentcli.permissions.bash_syntax import Command, Redirect, Script, Word, iter_words, parse_script

UNSAFE_TEXT = ("`", "$(", "<(", ">(")
"""Substitutions; if any appears anywhere (even quoted), no part is plain."""

_WRITING_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}
_NULL_DEVICE = "/dev/null"
MAX_NESTING = 4
"""How deep shell code inside shell code (`bash -c "eval '…'"`) is followed."""
CODE_MARKERS = ("$(", "`", "<(", ">(")
SHELL_STARTUP_VARIABLES = frozenset({"BASH_ENV", "ENV"})
"""Variables naming a file a shell runs when it starts."""
LOOKUPS = frozenset({"which", "type", "whereis", "whence", "where", "hash", "command"})
"""Programs that print where another program lives (so it can be run under another name)."""


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
    """Words after quote removal (`ec"ho" hi` → echo, hi); a word that expands is kept as written."""
    text: str
    """The command's own source text."""
    literal: int
    """How many leading words can expand to nothing but themselves (no $, glob, brace, ~)."""
    plain: bool
    """No assignment, substitution, file-writing redirection or unknown construct."""

    @property
    def risky_flag(self) -> str | None:
        """A flag of this command that writes files or runs programs (`bash_flags`)."""
        return risky_flag(self.words)


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
    if any(word == "*" for word in words):
        raise BashRuleError("a wildcard may only end the rule, as in Bash(git diff:*) or Bash(git diff *)")
    if prefix and body != body.rstrip():
        raise BashRuleError("write the prefix without trailing spaces, as in Bash(git diff:*)")
    return BashPattern(words, prefix, text)


# ------------------------------------------------------------------- allow rules


def parse_parts(command: str) -> list[SimpleCommand] | None:
    """The simple commands a line runs at top level, or None if it cannot be analysed.

    Lists (`;` `&&` `||` `&` newlines), pipelines, `( … )` subshells and `{ …; }` groups are
    looked through; other compound commands (if/for/while/case/functions) are not analysed.
    """
    script = parse_script(command)
    if not script.parts:
        return None
    unsafe_text = any(marker in command for marker in UNSAFE_TEXT)
    return [_simple(part, unsafe_text) for part in script.parts]


def _simple(command: Command, unsafe_text: bool) -> SimpleCommand:
    words = tuple(w.value if w.value is not None else w.text for w in command.words)
    literal = 0
    for word in command.words:
        if not word.literal:
            break
        literal += 1
    plain = (
        bool(command.words)
        and not unsafe_text
        and not command.assignments
        and not command.runs_code
        and all(word.simple_expansions_only for word in command.words)
        and all(_safe_redirect(r) for r in command.redirects)
    )
    return SimpleCommand(words, command.text, literal, plain)


def _safe_redirect(redirect: Redirect) -> bool:
    operator, target = redirect.operator, redirect.target
    if operator in (">&", "<&"):  # fd duplication (`2>&1`, `>&-`) is fine; `>& file` writes a file
        return target is not None and target.literal and ((target.value or "").isdigit() or target.value == "-")
    if operator in ("<", "<<<"):
        return target is not None and target.simple_expansions_only
    if operator in ("<<", "<<-"):
        return not redirect.heredoc_runs_code
    if operator in _WRITING_REDIRECTS:
        return target is not None and target.literal and target.value == _NULL_DEVICE
    return False


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
    if not pattern.prefix:
        return len(part.words) == n
    return part.risky_flag is None  # a prefix names the program, not every file it may write


# --------------------------------------------------------------- deny/ask rules


@dataclass(frozen=True)
class Invocation:
    """A program the line runs, with its arguments (the program's name is always known)."""

    words: tuple[Word, ...]
    source: str
    """The command text it comes from."""


@dataclass
class Analysis:
    """Everything a line runs, as far as it can be known without running it."""

    invocations: list[Invocation] = field(default_factory=list)
    unverifiable: list[str] = field(default_factory=list)
    """Why some program the line runs cannot be determined (empty when all are known)."""


@dataclass(frozen=True)
class RuleMatch:
    """A deny/ask rule catches a call: it does what the rule names, or cannot be shown not to."""

    unverified: str | None = None
    """None when the call really does what the rule names; else why it could not be verified."""


@functools.lru_cache(maxsize=256)
def analyse(command: str) -> Analysis:
    """Every program `command` runs, following wrappers and shell code, and what cannot be followed."""
    analysis = Analysis()
    _analyse(command, 0, analysis)
    return analysis


def _analyse(source: str, depth: int, out: Analysis) -> None:
    script = parse_script(source)
    if script.broken:
        out.unverifiable.append(f"the command cannot be analysed ({script.broken})")
    if script.arithmetic and any(_looks_like_code(w) for w in iter_words(script)):
        out.unverifiable.append("arithmetic in it may run a command hidden in a string")
    for command in script.commands:
        _follow(command, depth, out)
    for assignment in _assignments(script, out):
        name = (assignment.value or assignment.text).split("=", 1)[0]
        if name in SHELL_STARTUP_VARIABLES:
            out.unverifiable.append(f"it sets {name}, which makes a shell run the commands of a file")
        elif _looks_like_code(assignment):
            out.unverifiable.append(f"it sets {name} to text that may run as code later (`{assignment.text}`)")


def _assignments(script: Script, out: Analysis) -> list[Word]:
    """The line's assignments, and those `env NAME=VALUE …` makes."""
    found = list(script.assignments)
    for invocation in out.invocations:
        if program_name(invocation.words[0]) == "env":
            found.extend(w for w in invocation.words[1:] if "=" in (w.value or w.text).split(" ", 1)[0])
    return found


def _looks_like_code(word: Word) -> bool:
    """A quoted string that holds a substitution: it runs if something later evaluates it."""
    return word.value is not None and any(marker in word.value for marker in CODE_MARKERS)


def _follow(command: Command, depth: int, out: Analysis) -> None:
    pending: list[tuple[Word, ...]] = [command.words]
    while pending:
        words = pending.pop()
        if not words:
            continue
        head = words[0]
        if not head.literal:
            out.unverifiable.append(f"the program `{head.text}` is only known when the command runs")
            continue
        out.invocations.append(Invocation(words, command.text))
        for effect in effects(program_name(head), words[1:]):
            if isinstance(effect, Runs):
                pending.append(effect.words)
            elif isinstance(effect, Opaque):
                out.unverifiable.append(effect.reason)
            elif effect.word.value is None:
                out.unverifiable.append(f"it runs shell code (`{effect.word.text}`) that is only known when it runs")
            elif depth >= MAX_NESTING:
                out.unverifiable.append("it nests shell code too deeply to follow")
            else:
                assert isinstance(effect, Code)
                _analyse(effect.word.value, depth + 1, out)


def deny_match(command: str, pattern: BashPattern) -> RuleMatch | None:
    """Whether a deny/ask rule with `pattern` catches `command` (see the module docstring)."""
    if not pattern.prefix and command.strip() == pattern.text:
        return RuleMatch()
    analysis = analyse(command)
    maybe: str | None = None
    for invocation in analysis.invocations:
        verdict = _runs(invocation.words, pattern)
        if verdict is True:
            return RuleMatch()
        if verdict is None and maybe is None:
            maybe = f"the arguments of `{invocation.source}` are only known when it runs"
    if analysis.unverifiable:
        return RuleMatch(analysis.unverifiable[0])
    return RuleMatch(maybe) if maybe is not None else None


def _runs(words: tuple[Word, ...], pattern: BashPattern) -> bool | None:
    """True: runs what `pattern` names; None: might (unknown arguments); False: does not.

    An exact pattern is judged like a prefix (deny `git push` also catches `git push -f`),
    and the pattern's further words may be separated by other words (`git -C x push`).
    """
    name = program_name(words[0])
    wanted = os.path.basename(pattern.words[0])
    args = words[1:]
    if name != wanted:
        return _points_at(name, args, wanted)
    rest = pattern.words[1:]
    if not rest:
        return True
    known = [w.value for w in args if w.literal]
    if _in_order(rest, known):
        return True
    first_known = next((i for i, w in enumerate(args) if w.literal and not (w.value or "").startswith("-")), len(args))
    return None if any(not w.literal for w in args[:first_known]) else False


def _points_at(name: str, args: tuple[Word, ...], wanted: str) -> bool:
    """`which rm`, `cp /bin/rm x`: looks up the program, or names its file (to run it under another name)."""
    for word in args:
        value = word.value
        if not word.literal or not value:
            continue
        if name in LOOKUPS and value == wanted:
            return True
        if "/" in value and os.path.basename(value) == wanted and _is_program_file(value):
            return True
    return False


def _is_program_file(path: str) -> bool:
    parts = path.split("/")
    return "bin" in parts or "sbin" in parts or (os.path.isfile(path) and os.access(path, os.X_OK))


def _in_order(wanted: Sequence[str], words: Sequence[str | None]) -> bool:
    remaining = iter(words)
    return all(any(word == item for word in remaining) for item in wanted)

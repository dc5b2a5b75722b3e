"""A Bash command line as the permission rules see it: words, simple commands, redirections.

Parsed with tree-sitter's Bash grammar (loaded on first use, ~15 ms), which reads all of
Bash — `case`, `[[ ]]`, `$(( ))`, heredocs with quoted delimiters — so the rules can judge
what really runs instead of giving up. What this module promises:

- `Word.value` is the word after quote removal when it cannot expand into anything else
  (no `$…`, substitution or ANSI-C quoting); `Word.literal` additionally rules out glob,
  brace and tilde expansion. Anything unsure is `None` / not literal.
- `Script.commands` holds every simple command anywhere in the line: inside `$(…)`,
  backticks, process substitutions, heredoc bodies, `if`/`for`/`case` bodies, functions.
- `Script.parts` holds the commands that run at top level (lists, pipelines, `( … )` and
  `{ …; }` looked through), or None when the line has any other construct there.
- A line that does not parse cleanly has `Script.broken` set; callers must then assume
  the worst (allow rules cover nothing, deny rules treat it as unverifiable).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

WORD_NODES = frozenset(
    {
        "word", "number", "string", "raw_string", "ansi_c_string", "translated_string", "concatenation",
        "simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion",
        "$",
    }
)  # fmt: skip
"""Node types that make up one shell word."""
EXPANDING_NODES = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
RUNS_CODE_NODES = frozenset({"command_substitution", "process_substitution", "arithmetic_expansion"})
"""Expansions that run commands (arithmetic can, through array subscripts)."""
REDIRECT_NODES = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
CONTAINERS = frozenset({"program", "list", "pipeline", "subshell", "compound_statement", "negated_command"})
"""Top-level constructs the allow rules look through."""
DECLARATIONS = frozenset({"declaration_command", "unset_command"})

_GLOB = set("*?[")
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\\n])')
"""Inside double quotes a backslash escapes only $ ` " \\ and a newline (which it removes)."""
_SPECIAL_PARAMETER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]")


@dataclass(frozen=True)
class Word:
    """One shell word as written, and what it is known to mean."""

    text: str
    """The word's source text."""
    value: str | None
    """After quote removal, when no parameter/command expansion can change it; else None."""
    literal: bool
    """`value` is exactly what the program receives (no glob, brace or tilde expansion either)."""
    simple_expansions_only: bool = True
    """Any expansion in the word is a plain `$NAME`/`${NAME}` (no operators, no substitution)."""

    @classmethod
    def of(cls, value: str) -> Word:
        """A word known to be exactly `value` (e.g. one split from a string)."""
        return cls(value, value, True)


@dataclass(frozen=True)
class Redirect:
    operator: str
    """`>`, `>>`, `&>`, `>&`, `<`, `<<`, `<<<`, …"""
    target: Word | None
    """The file (or descriptor) redirected to; None for a heredoc."""
    descriptor: str | None = None
    """An explicit descriptor before the operator (`2` in `2>`)."""
    heredoc_runs_code: bool = False
    """A heredoc body that contains command substitutions."""


@dataclass(frozen=True)
class Command:
    """One simple command."""

    words: tuple[Word, ...]
    """The command name first, then its arguments."""
    text: str
    assignments: tuple[Word, ...] = ()
    """`NAME=value` words before the command name."""
    redirects: tuple[Redirect, ...] = ()
    """Redirections of this command (including those written after a `{ }`/`( )` around it)."""
    runs_code: bool = False
    """An argument, assignment or redirection contains a command/process substitution."""
    declaration: bool = False
    """`export`, `declare`, `local`, `readonly`, `typeset`, `unset`: a builtin the grammar reads apart."""


@dataclass
class Script:
    source: str
    commands: list[Command] = field(default_factory=list)
    parts: list[Command] | None = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    """Every redirection in the line, also those of compound commands."""
    assignments: list[Word] = field(default_factory=list)
    """Every `NAME=value` in the line: before a command, on their own, or given to export/declare/local."""
    broken: str | None = None
    """Why the line could not be parsed cleanly (None when it could)."""
    arithmetic: bool = False
    """Arithmetic evaluation happens somewhere (`$(( ))`, `(( ))`, `let`, `[[ -eq ]]`)."""


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=256)
def parse_script(source: str) -> Script:
    """The analysis of one command line (cached: several rules judge the same line)."""
    script = Script(source)
    if "\0" in source:
        script.broken = "it contains a NUL byte"
        script.parts = None
        return script
    data = source.encode("utf-8", errors="surrogateescape")
    try:
        root = _parser().parse(data).root_node
        reader = _Reader(data, script)
        if root.has_error:
            script.broken = "it is not valid shell syntax"
        reader.walk(root, top=True)
    except RecursionError:
        script.broken = "it is nested too deeply to analyse"
    if script.broken:
        script.parts = None
    return script


class _Reader:
    """Walks the tree once, filling a Script."""

    def __init__(self, data: bytes, script: Script) -> None:
        self.data = data
        self.script = script

    def text(self, node: Any) -> str:
        return self.data[node.start_byte : node.end_byte].decode("utf-8", errors="surrogateescape")

    def walk(self, node: Any, top: bool, outer_redirects: tuple[Redirect, ...] = ()) -> None:
        kind = node.type
        if kind in ("ERROR",) or node.is_missing:
            self.script.broken = self.script.broken or "it is not valid shell syntax"
        if kind == "redirected_statement":
            redirects = tuple(self.redirect(c) for c in node.children if c.type in REDIRECT_NODES)
            self.script.redirects.extend(redirects)
            body = node.child_by_field_name("body")
            for child in node.children:
                if child.type in REDIRECT_NODES:
                    self.walk_inside(child)
                elif child is not None and (body is None or child.id == body.id):
                    self.walk(child, top, outer_redirects + redirects)
            return
        if kind == "variable_assignment":
            self.script.assignments.append(self.word(node))
        if kind == "command" or kind in DECLARATIONS:
            command = self.command(node, outer_redirects)
            self.script.commands.append(command)
            if top and self.script.parts is not None:
                self.script.parts.append(command)
            if command.words and command.words[0].value == "let":
                self.script.arithmetic = True
            for child in node.children:
                self.walk_inside(child)
            return
        arithmetic = kind == "compound_statement" and self.text(node).startswith("((")
        if arithmetic or kind in ("arithmetic_expansion", "test_command"):
            self.script.arithmetic = True
        container = kind in CONTAINERS and not arithmetic
        if top and not container and not self._punctuation(node):
            self.script.parts = None  # an if/for/case/function… at top level: allow rules do not look inside
        for child in node.children:  # a redirection of `( … )`, `{ …; }` or `if …` applies to what is inside
            self.walk(child, top and container, outer_redirects)

    def walk_inside(self, node: Any) -> None:
        """Commands nested in a word, assignment or redirection (substitutions, heredoc bodies)."""
        for child in node.children:
            self.walk(child, top=False)

    @staticmethod
    def _punctuation(node: Any) -> bool:
        return not node.is_named or node.type == "comment"

    def command(self, node: Any, outer_redirects: tuple[Redirect, ...]) -> Command:
        words: list[Word] = []
        assignments: list[Word] = []
        redirects: list[Redirect] = list(outer_redirects)
        declaration = node.type in DECLARATIONS
        for child in node.children:
            kind = child.type
            if kind == "command_name":
                words.extend(self.word(c) for c in child.children)
            elif kind == "variable_assignment" and not declaration:
                assignments.append(self.word(child))
                self.script.assignments.append(assignments[-1])
            elif kind in REDIRECT_NODES:
                redirect = self.redirect(child)
                redirects.append(redirect)
                self.script.redirects.append(redirect)
            elif kind in WORD_NODES or kind == "variable_assignment" or (declaration and child.is_named):
                words.append(self.word(child))
                if kind == "variable_assignment":
                    self.script.assignments.append(words[-1])
            elif declaration and not child.is_named and not words:
                words.append(Word.of(self.text(child)))  # the keyword: export, declare, unset…
        runs = _contains(node, RUNS_CODE_NODES)
        return Command(tuple(words), self.text(node), tuple(assignments), tuple(redirects), runs, declaration)

    def redirect(self, node: Any) -> Redirect:
        operator, target, descriptor = "", None, None
        heredoc_code = False
        for child in node.children:
            kind = child.type
            if kind == "file_descriptor":
                descriptor = self.text(child)
            elif not child.is_named:
                operator = operator or self.text(child)
            elif kind == "heredoc_body":
                heredoc_code = _contains(child, RUNS_CODE_NODES)
            elif kind in WORD_NODES and target is None and node.type != "heredoc_redirect":
                target = self.word(child)
        return Redirect(operator, target, descriptor, heredoc_code)

    # ---------------------------------------------------------------- words

    def word(self, node: Any) -> Word:
        text = self.text(node)
        value, literal, simple = self._value(node)
        return Word(text, value, literal and value is not None, simple)

    def _value(self, node: Any) -> tuple[str | None, bool, bool]:
        """(value, literal, only simple expansions) of one word node."""
        kind = node.type
        if kind in ("word", "number"):
            return _unquoted(self.text(node))
        if kind == "raw_string":
            return self.text(node)[1:-1], True, True
        if kind == "string":
            return self._double_quoted(node)
        if kind == "concatenation":
            values: list[str] = []
            literal, simple, known = True, True, True
            for child in node.children:
                value, child_literal, child_simple = self._value(child)
                literal, simple = literal and child_literal, simple and child_simple
                if value is None:
                    known = False
                else:
                    values.append(value)
            return ("".join(values) if known else None), literal, simple
        if kind == "variable_assignment":
            name = node.child_by_field_name("name")
            value_node = node.child_by_field_name("value")
            prefix = self.text(name) + "=" if name is not None else ""
            if value_node is None:
                return prefix, True, True
            value, literal, simple = self._value(value_node)
            return (prefix + value if value is not None else None), literal, simple
        if kind in ("simple_expansion", "expansion"):
            return None, False, self._simple_expansion(node)
        return None, False, False  # substitutions, ANSI-C and translated strings, a lone `$`

    def _double_quoted(self, node: Any) -> tuple[str | None, bool, bool]:
        parts: list[str] = []
        known, simple = True, True
        for child in node.children:
            kind = child.type
            if kind == "string_content":
                parts.append(_DOUBLE_QUOTED_ESCAPE.sub(_unescape, self.text(child)))
            elif kind in EXPANDING_NODES:
                known = False
                simple = simple and kind in ("simple_expansion", "expansion") and self._simple_expansion(child)
            elif child.is_named:
                known, simple = False, False
        return ("".join(parts) if known else None), True, simple

    def _simple_expansion(self, node: Any) -> bool:
        """`$NAME`, `${NAME}`, `$@`…: nothing but a parameter's value."""
        text = self.text(node)
        inner = text[2:-1] if text.startswith("${") else text[1:]
        return _SPECIAL_PARAMETER.fullmatch(inner) is not None


def _unquoted(text: str) -> tuple[str | None, bool, bool]:
    """An unquoted word: backslashes removed; glob characters or a leading ~ make it non-literal."""
    out: list[str] = []
    literal = not text.startswith("~")
    escaped = False
    for char in text:
        if escaped:
            escaped = False
            if char != "\n":
                out.append(char)
            continue
        if char == "\\":
            escaped = True
            continue
        if char in _GLOB or char in "{}":
            literal = False
        out.append(char)
    return "".join(out), literal, True


def _unescape(match: re.Match[str]) -> str:
    return "" if match.group(1) == "\n" else match.group(1)


def _contains(node: Any, kinds: frozenset[str]) -> bool:
    stack = list(node.children)
    while stack:
        child = stack.pop()
        if child.type in kinds:
            return True
        stack.extend(child.children)
    return False


def iter_words(script: Script) -> Iterator[Word]:
    """Every argument, assignment and redirection target of every command in the line."""
    for command in script.commands:
        yield from command.assignments
        yield from command.words
    for redirect in script.redirects:
        if redirect.target is not None:
            yield redirect.target

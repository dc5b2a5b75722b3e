"""Bash rules must be sound: a prefix rule covers a command only if every part is that command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agentcli.permissions.bash_rules import (
    BashRuleError,
    covers,
    deny_match,
    parse_bash_specifier,
    parse_parts,
)
from tests.waiting import CEILING

ECHO = parse_bash_specifier("echo:*")
GIT_DIFF = parse_bash_specifier("git diff *")
NPM_BUILD = parse_bash_specifier("npm run build")
RULES = [p for p in (ECHO, GIT_DIFF, NPM_BUILD) if p is not None]

# Commands that `Bash(echo:*)`, `Bash(git diff *)` and `Bash(npm run build)` must NOT allow.
NOT_COVERED = [
    # compound commands: every part must be allowed
    "echo hi && rm -rf x",
    "echo hi || rm -rf x",
    "echo hi; rm -rf x",
    "echo hi;rm -rf x",
    "echo hi & rm -rf x",
    "echo hi | sh",
    "echo hi |& tee out.txt",
    "echo hi\nrm -rf x",
    "echo hi \\\n&& rm -rf x",
    "echo hi #\nrm -rf x",
    "git diff; rm -rf x",
    "git diff && npm run build --prod",
    "(rm -rf x)",
    "echo a && (rm -rf x)",
    "{ echo hi; rm -rf x; }",
    "! rm -rf x",
    # command and process substitution
    "echo $(touch f)",
    "echo `touch f`",
    'echo "$(touch f)"',
    'echo "`touch f`"',
    "echo hi#$(touch f)",
    "echo ${X:-$(touch f)}",
    "echo <(touch f)",
    "echo >(touch f)",
    "git diff $(touch f)",
    "$(echo rm) -rf x",
    "echo hi <<< $(touch f)",
    "echo <<EOF\n$(touch f)\nEOF",
    # output redirection to files
    "echo hi > f",
    "echo hi >> f",
    "echo hi 2> f",
    "echo hi &> f",
    "echo hi >| f",
    "echo hi >& f",
    "echo hi <> f",
    "echo hi >/dev/nullx",
    "git diff > patch.diff",
    "(echo hi) > f",
    # env prefixes and other commands in first position
    "FOO=1 rm -rf x",
    "FOO=1 echo hi",
    "LD_PRELOAD=/tmp/evil.so echo hi",
    "exec echo hi",
    "time echo hi",
    "$CMD hi",
    "ech? hi",
    "{echo,hi}",
    # quoting tricks and word boundaries
    'echo "hi" && rm -rf x',
    "echo 'a;b'; rm -rf x",
    "echo\\ hi",
    '"git diff" HEAD',
    "git\\ diff HEAD",
    "git diff-tree HEAD",
    "git -c core.pager=sh diff",
    "gitdiff",
    "npm run build --prod",
    "npm run buildx",
    # constructs the checker does not analyse, or cannot parse: never covered
    "if true; then echo hi; fi",
    "for f in *; do rm $f; done",
    "while true; do echo hi; done",
    "f() { echo hi; }; f",
    "echo $((1+2))",
    "((x=1))",
    "[[ -f x ]] && echo hi",
    "echo 'unterminated",
    "echo hi)",
    "coproc echo hi",
    "echo $'\\x41'",
    "",
    "   ",
    "# only a comment",
]

COVERED = [
    "echo hi",
    "echo",
    "echo 'a b' \"c d\"",
    "echo hi 2>&1",
    "echo hi >&2",
    "echo hi >/dev/null 2>&1",
    "echo hi < /dev/null",
    "echo $HOME ${USER}",
    "echo *.py ~/x",
    "echo hi # a comment",
    'ec"ho" hi',
    "echo hi && echo there",
    "echo a | echo b",
    "echo a\necho b",
    "(echo a; echo b)",
    "{ echo a; }",
    "echo hi;",
    "git diff",
    "git diff HEAD~1 -- src/",
    "git  diff --stat",
    "git diff && echo done",
    "npm run build",
    "npm run build && echo built",
]


def test_the_adversarial_set_is_big_enough() -> None:
    assert len(NOT_COVERED) >= 30


@pytest.mark.parametrize("command", NOT_COVERED)
def test_prefix_rules_do_not_cover(command: str) -> None:
    assert not covers(command, RULES).covered


@pytest.mark.parametrize("command", COVERED)
def test_prefix_rules_cover(command: str) -> None:
    assert covers(command, RULES).covered


def test_uncovered_parts_are_reported() -> None:
    coverage = covers("echo hi && touch x | sort", RULES)
    assert coverage.uncovered is not None
    assert [p.words for p in coverage.uncovered] == [("touch", "x"), ("sort",)]


def test_an_unparseable_command_has_no_parts() -> None:
    assert parse_parts("echo hi)") is None
    assert covers("echo 'unterminated", RULES).uncovered is None


def test_arithmetic_is_read_but_never_plain() -> None:
    [part] = parse_parts("echo $((1+2))") or []
    assert part.words[0] == "echo" and not part.plain


def test_an_exact_rule_matches_its_own_text_even_when_it_cannot_be_analysed() -> None:
    pattern = parse_bash_specifier("echo $(date)")
    assert pattern is not None
    assert covers("echo $(date)", [pattern]).covered
    assert not covers("echo $(date) && rm x", [pattern]).covered
    assert not covers("echo $(rm x)", [pattern]).covered


def test_quoted_arguments_in_exact_rules() -> None:
    pattern = parse_bash_specifier('git commit -m "fix bug"')
    assert pattern is not None
    assert covers("git commit -m 'fix bug'", [pattern]).covered
    assert not covers("git commit -m fix bug", [pattern]).covered


# ------------------------------------------------------------------- deny/ask side

RM = parse_bash_specifier("rm:*")

CAUGHT_BY_DENY = [
    "rm -rf x",
    "echo hi && rm -rf x",
    "echo hi | rm -rf x",
    "FOO=1 rm -rf x",
    "echo $(rm -rf x)",
    "echo `rm -rf x`",
    "echo ${X:-$(rm -rf x)}",
    "(rm -rf x)",
    "if true; then rm -rf x; fi",
    "for f in a; do rm $f; done",
    "f() { rm -rf x; }; f",
    "sudo rm -rf x",
    "env A=1 rm -rf x",
    "timeout 5 rm -rf x",
    "xargs rm < list.txt",
    "/bin/rm -rf x",
    'bash -c "rm -rf x"',
    "sh -lc 'echo; rm -rf x'",
    "eval rm -rf x",
    "cat <<EOF\n$(rm -rf x)\nEOF",
    "echo $((1+2)); rm -rf x",
]


@pytest.mark.parametrize("command", CAUGHT_BY_DENY)
def test_deny_rules_look_everywhere(command: str) -> None:
    assert RM is not None
    assert deny_match(command, RM) is not None


@pytest.mark.parametrize("command", ["git rm x", "echo rm", "grep -r 'rm -rf' .", "ls"])
def test_deny_rules_match_commands_not_words(command: str) -> None:
    assert RM is not None
    assert deny_match(command, RM) is None


# ------------------------------------------------------------------ specifiers


@pytest.mark.parametrize(
    ("spec", "words", "prefix"),
    [
        ("git diff:*", ("git", "diff"), True),
        ("git diff *", ("git", "diff"), True),
        ("npm run build", ("npm", "run", "build"), False),
        ("git commit -m 'a b'", ("git", "commit", "-m", "a b"), False),
    ],
)
def test_specifiers(spec: str, words: tuple[str, ...], prefix: bool) -> None:
    pattern = parse_bash_specifier(spec)
    assert pattern is not None
    assert (pattern.words, pattern.prefix) == (words, prefix)


def test_a_lone_star_is_every_command() -> None:
    assert parse_bash_specifier("*") is None


@pytest.mark.parametrize("spec", ["git * main", ":*", "git:* diff", "echo 'x", "git diff :*"])
def test_bad_specifiers(spec: str) -> None:
    with pytest.raises(BashRuleError):
        parse_bash_specifier(spec)


def test_covered_commands_really_run_only_the_allowed_programs(tmp_path: Path) -> None:
    """Differential check against real bash: with `echo` made an external stub and PATH holding
    only stubs for echo/git/npm, every covered command must run nothing else and write no file."""
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls.log"
    for name in ("echo", "git", "npm"):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\nprintf "%s\\n" "{name} $*" >> {log}\n')
        stub.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    for command in COVERED:
        done = subprocess.run(
            ["/bin/bash", "-c", f"enable -n echo\n{command}"],
            cwd=work,
            env={"PATH": str(stubs), "HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=CEILING,
        )
        assert "not found" not in done.stderr, (command, done.stderr)
        assert list(work.iterdir()) == [], command
    calls = log.read_text().splitlines()
    assert calls and all(line.split()[0] in ("echo", "git", "npm") for line in calls)

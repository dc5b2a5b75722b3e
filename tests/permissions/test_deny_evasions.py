"""Deny and ask rules are sound: no spelling of a denied program gets through.

Every spelling below really runs `rm` in bash (checked against real bash with a stub `rm`
on PATH), and every one is caught by `Bash(rm:*)`: either because the gate can see that
it runs rm, or because it cannot determine what the command runs, which counts as matching.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.permissions.bash_rules import covers, deny_match, parse_bash_specifier
from agentcli.permissions.gate import Gate
from tests.permissions.helpers import check, outcome, rules

RM = parse_bash_specifier("rm:*")
assert RM is not None

# Spellings that delete `k` with rm, using only bash and what every Linux has (coreutils,
# findutils, util-linux): each is also run against real bash below.
REAL_BASH = [
    # from the security issue
    "timeout -s KILL 5 rm k",
    "env -u HOME rm k",
    "env -C . rm k",
    "env -S 'rm -f k'",
    "xargs -a /dev/null rm k",
    "bash -c -- 'rm -f k'",
    "eval $'rm -f k'",
    "/bin/[r]m k",
    "exec -a x rm k",
    "coproc rm k; wait",
    "trap 'rm k' EXIT",
    "find . -name k -exec rm {} \\;",
    "flock f rm k",
    "script -qc 'rm k' /dev/null",
    "$'rm' k",
    "rm{,} k",
    "$(which rm) k",
    "R=rm; $R k",
    "echo 'rm k' | bash",
    "bash <<EOF\nrm k\nEOF",
    "bash < <(echo rm k)",
    "source <(echo rm k)",
    # quoting and escapes
    "rm k",
    "\\rm k",
    "r\\m k",
    '"rm" k',
    "'r'm k",
    'r""m k',
    "{rm,k}",
    "$'\\x72\\x6d' k",
    "/usr/bin/r[m] k",
    # wrappers, each with its own option grammar
    "command rm k",
    "command -p rm k",
    "builtin eval rm k",
    "nohup rm k",
    "nice -n 5 rm k",
    "nice -10 rm k",
    "stdbuf -oL rm k",
    "setsid -w rm k",
    "time rm k",
    "env -i rm k",
    "env -- rm k",
    "env - rm k",
    "env A=1 B=2 rm k",
    "env --split-string='rm k'",
    "timeout 5 rm k",
    "timeout --signal=KILL -k 1 5 rm k",
    "timeout -- 5 rm k",
    "xargs rm <<< k",
    "echo k | xargs -I{} rm {}",
    "xargs -n1 rm <<< k",
    "xargs --arg-file=/dev/null rm k",
    "find . -name k -execdir rm {} +",
    "flock f -c 'rm k'",
    "flock -w 5 f rm k",
    "chrt -o 0 rm k",
    "taskset -c 0 rm k",
    "ionice -c3 rm k",
    "exec rm k",
    # shells and shell code
    "sh -c 'rm k'",
    "bash -lc 'rm k'",
    "bash -o pipefail -c 'rm k'",
    "bash --norc -c 'rm k'",
    "sh -c \"eval 'rm k'\"",
    "bash -c 'bash -c \"rm k\"'",
    'eval "rm k"',
    "eval rm k",
    "eval r''m k",
    'eval "$(echo rm k)"',
    ". <(echo rm k)",
    "bash <<< 'rm k'",
    "cat <<'EOF' | sh\nrm k\nEOF",
    "sh <<'EOF'\nrm k\nEOF",
    "sh -s <<< 'rm k'",
    "printf 'rm k' | sh",
    "BASH_ENV=<(echo rm k) bash -c true",
    "PS4='$(rm k)'; set -x; true",
    'set -- rm k; "$@"',
    "IFS=,; x=rm,k; $x",
    "$SHELL -c 'rm k'",
    # builtins that run code or rebind names
    "a='x[$(rm k)]'; echo $((a))",
    "shopt -s expand_aliases; alias r=rm\nr k",
    "mapfile -C 'rm k' -c 1 <<< x",
    "hash -p /bin/rm ls; ls k",
    # the program copied or linked under another name
    "cp /bin/rm ./x && ./x k",
    'ln -s "$(command -v rm)" x && ./x k',
    "git -c alias.x='!rm k' x",
    # anywhere in the line
    "x=$(rm k)",
    "echo $(rm k)",
    'echo "$(rm k)"',
    "echo `rm k`",
    "cat <(rm k)",
    "cat <<EOF\n$(rm k)\nEOF",
    "f() { rm k; }; f",
    "function f { rm k; }; f",
    "if true; then rm k; fi",
    "for i in 1; do rm k; done",
    "while true; do rm k; break; done",
    "case x in x) rm k;; esac",
    "[[ -n x ]] && rm k",
    "(( 1 )) && rm k",
    "! rm k",
    "{ rm k; }",
    "(rm k)",
    "true | rm k",
    "rm k & wait",
    "echo $((1+2)); rm k",
    "echo ${X:-$(rm k)}",
]

# Spellings whose helper may be missing on a test machine (or needs privileges): judged only.
JUDGED_ONLY = [
    "strace -o /dev/null rm k",
    "unshare -r rm k",
    "sudo rm k",
    "sudo -u root -- rm k",
    "sudo -s rm k",
    "doas rm k",
    "su -c 'rm k'",
    "runuser -u me -- rm k",
    "busybox rm k",
    "watch -n 1 rm k",
    "watch 'rm k'",
    "npx rm k",
    "npm exec -- rm k",
    "uv run rm k",
    "caffeinate -i rm k",
    "unbuffer rm k",
    "parallel rm ::: k",
    "chroot / rm k",
    "zsh -c 'rm k'",
    "fish -c 'rm k'",
    "fish --command='rm k'",
    "PS4='$(rm k)' bash -xc true",  # bash ignores an inherited PS4 when run as root
]

EVASIONS = REAL_BASH + JUDGED_ONLY


def test_the_evasion_set_is_big_enough() -> None:
    assert len(EVASIONS) >= 60


@pytest.mark.parametrize("command", EVASIONS)
def test_a_deny_rule_catches_every_spelling(command: str) -> None:
    assert RM is not None
    assert deny_match(command, RM) is not None


@pytest.mark.parametrize("command", EVASIONS)
def test_the_gate_denies_every_spelling_even_in_bypass_mode(command: str, tmp_path: Path) -> None:
    gate = Gate(rules(allow=("Bash",), deny=("Bash(rm:*)",)), "bypassPermissions")
    assert outcome(gate, "Bash", {"command": command}, tmp_path) == "deny"


def test_every_real_bash_spelling_really_runs_rm(tmp_path: Path) -> None:
    """The list is not padded: each spelling, run by bash with a stub rm first on PATH, reaches rm."""
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    log = tmp_path / "rm.log"
    (stubs / "rm").write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    (stubs / "rm").chmod(0o755)
    missed = []
    for index, command in enumerate(REAL_BASH):
        work = tmp_path / f"w{index}"
        work.mkdir()
        (work / "k").write_text("x")
        (work / "f").write_text("")
        log.unlink(missing_ok=True)
        subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env={"PATH": f"{stubs}:/usr/bin:/bin", "HOME": str(tmp_path), "SHELL": shutil.which("bash") or "bash"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=30,
        )
        if not log.exists() and (work / "k").exists():
            missed.append(command)
    assert missed == []


def test_an_unverifiable_command_says_why_it_was_denied(tmp_path: Path) -> None:
    gate = Gate(rules(deny=("Bash(rm:*)",)))
    decision = check(gate, "Bash", {"command": "R=rm; $R k"}, tmp_path)
    assert not decision.allowed
    assert "could not be verified against the deny rule" in decision.message
    assert "`$R` is only known when the command runs" in decision.message
    assert "Bash(rm:*)" in decision.message


def test_an_ask_rule_asks_about_an_unverifiable_command(tmp_path: Path) -> None:
    gate = Gate(rules(allow=("Bash",), ask=("Bash(git push:*)",)))
    assert outcome(gate, "Bash", {"command": 'eval "$CMD"'}, tmp_path) == "ask"
    assert outcome(gate, "Bash", {"command": "git -C . push"}, tmp_path) == "ask"
    assert outcome(gate, "Bash", {"command": "git status"}, tmp_path) == "allow"


# Commands a deny rule on rm must leave alone (no rm anywhere, everything determinable).
UNRELATED = [
    "git rm x",
    "echo rm",
    "grep -r 'rm -rf' .",
    "ls",
    'git commit -m "$MSG"',
    "git commit -F - <<'EOF'\nremove the rm call\nEOF",
    "for f in *.py; do echo $f; done",
    "case $x in a) echo a;; esac",
    "[[ -f x ]] && echo yes",
    "echo $((1+2))",
    "timeout 5 pytest -q",
    "env FOO=1 make test",
    "xargs -n1 echo <<< k",
    "find . -name '*.pyc' -print",
    "bash scripts/test",
    "npx prettier --check .",
    "uv run pytest",
    "sudo -u www-data ls",
    "command -v git",
]


@pytest.mark.parametrize("command", UNRELATED)
def test_commands_without_rm_are_not_caught(command: str) -> None:
    assert RM is not None
    assert deny_match(command, RM) is None


def test_deny_rules_with_several_words_look_past_options(tmp_path: Path) -> None:
    push = parse_bash_specifier("git push:*")
    assert push is not None
    for command in ("git push", "git -C . push origin", "git --no-pager push -f", "sudo git push", "git push; ls"):
        assert deny_match(command, push) is not None, command
    for command in ("git status", "git commit -m push-notes", "echo git push"):
        assert deny_match(command, push) is None, command
    match = deny_match("git $SUBCOMMAND", push)
    assert match is not None and match.unverified


def test_allow_rules_still_cover_what_they_did() -> None:
    from tests.permissions.test_bash_rules import COVERED, RULES

    assert all(covers(command, RULES).covered for command in COVERED)

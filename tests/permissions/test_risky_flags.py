"""A prefix allow rule does not cover flags that write files or run programs."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.permissions.bash_flags import risky_flag
from agentcli.permissions.bash_rules import BashPattern, covers, parse_bash_specifier
from agentcli.permissions.gate import Gate
from tests.permissions.helpers import check, outcome, rules


def patterns(*specs: str) -> list[BashPattern]:
    return [p for p in (parse_bash_specifier(s) for s in specs) if p is not None]


# (allow rule, command it must NOT cover, what the question names)
RISKY = [
    ("git diff:*", "git diff --output=/tmp/elsewhere HEAD", "--output"),
    ("git diff:*", "git diff --output /tmp/elsewhere", "--output"),
    ("git log:*", "git log -p --output=x", "--output"),
    ("git:*", "git -c core.pager='sh -c evil' log", "-c"),
    ("git:*", "git --exec-path=/tmp/x status", "--exec-path"),
    ("git:*", "git -ccore.fsmonitor=evil status", "-c"),
    ("git fetch:*", "git fetch --upload-pack=./x origin", "--upload-pack"),
    ("git rebase:*", "git rebase -x 'make' main", "-x"),
    ("git rebase:*", "git rebase --exec=make main", "--exec"),
    ("git grep:*", "git grep -O foo", "-O"),
    ("git config:*", "git config core.fsmonitor 'touch x'", "git config"),
    ("git config:*", "git config --unset user.name", "git config"),
    ("git:*", "git config --global alias.x '!sh'", "git config"),
    ("git bisect:*", "git bisect run ./evil", "git bisect run"),
    ("git submodule:*", "git submodule foreach 'rm -rf .'", "git submodule foreach"),
    ("npm test:*", "npm test --script-shell=./x", "--script-shell"),
    ("npm run:*", "npm run build --prefix /tmp/other", "--prefix"),
    ("pnpm test:*", "pnpm test --script-shell ./x", "--script-shell"),
    ("find:*", "find . -exec rm {} ;", "-exec"),
    ("find:*", "find . -name '*.py' -delete", "-delete"),
    ("find:*", "find . -fprint /tmp/list", "-fprint"),
    ("sed:*", "sed -i s/a/b/ file", "-i"),
    ("sed:*", "sed -ni 's/a/b/p' file", "-i"),
    ("sed:*", "sed --in-place=.bak s/a/b/ file", "--in-place"),
    ("sed:*", "sed 's/a/b/w /tmp/out' file", "w, W or e"),
    ("sed:*", "sed -n '1p;w /tmp/out' file", "w, W or e"),
    ("sed:*", "sed 's/.*/id/e' file", "w, W or e"),
    ("sed:*", "sed -f script.sed file", "-f"),
    ("sort:*", "sort -o /tmp/out file", "-o"),
    ("sort:*", "sort -ro /tmp/out file", "-o"),
    ("sort:*", "sort --output=/tmp/out file", "--output"),
    ("tar:*", "tar --to-command=sh -xf a.tar", "--to-command"),
    ("tar:*", "tar -I ./x -cf a.tar .", "-I"),
    ("tar:*", "tar --use-compress-program=./x -cf a.tar .", "--use-compress-program"),
    ("rg:*", "rg --pre ./x pattern", "--pre"),
    ("make:*", "make --eval='x:;rm -rf .' x", "--eval"),
    ("pytest:*", "pytest --basetemp=/home/me", "--basetemp"),
    ("python -m pytest:*", "python -m pytest -p evil_plugin", "-p"),
    ("curl:*", "curl -o /tmp/x https://example.com", "-o"),
    ("curl:*", "curl -fsSLo /tmp/x https://example.com", "-o"),
    ("awk:*", "awk 'BEGIN{system(\"id\")}'", "system()"),
    ("go test:*", "go test -exec ./x ./...", "-exec"),
    ("cargo test:*", "cargo test --config target.x.runner='./evil'", "--config"),
]


@pytest.mark.parametrize(("rule", "command", "named"), RISKY)
def test_a_prefix_rule_does_not_cover_a_risky_flag(rule: str, command: str, named: str) -> None:
    assert not covers(command, patterns(rule)).covered
    found = risky_flag(command.split())
    assert found is not None and named in found


# (allow rule, command it must still cover)
SAFE = [
    ("git diff:*", "git diff HEAD~1 -- src/"),
    ("git diff:*", "git diff --stat"),
    ("git diff:*", "git diff -- --output=x"),
    ("git log:*", "git log --oneline -5"),
    ("git config:*", "git config user.name"),
    ("git config:*", "git config --get user.email"),
    ("git config:*", "git config --list"),
    ("npm test:*", "npm test -- --watch=false"),
    ("find:*", "find . -name '*.py' -print"),
    ("sed:*", "sed -n '1,20p' file"),
    ("sed:*", "sed 's/a/b/g' file"),
    ("sed:*", "sed -E -e 's/(a)/\\1b/' -e '/x/d' file"),
    ("sed:*", "sed '/start/,/end/p' file"),
    ("sort:*", "sort -k2 -n file"),
    ("rg:*", "rg -n pattern src"),
    ("pytest:*", "pytest -q tests/test_x.py"),
    ("curl:*", "curl -fsSL https://example.com"),
    ("awk:*", "awk '{print $1}' file"),
    ("tar:*", "tar -tzf a.tgz"),
]


@pytest.mark.parametrize(("rule", "command"), SAFE)
def test_a_prefix_rule_still_covers_ordinary_flags(rule: str, command: str) -> None:
    assert covers(command, patterns(rule)).covered


def test_an_exact_rule_allows_a_risky_flag_it_spells_out(tmp_path: Path) -> None:
    command = "git diff --output=patch.diff"
    assert outcome(Gate(rules(allow=("Bash(git diff:*)",))), "Bash", {"command": command}, tmp_path) == "ask"
    assert outcome(Gate(rules(allow=(f"Bash({command})",))), "Bash", {"command": command}, tmp_path) == "allow"


def test_the_denial_offers_the_exact_command_not_the_prefix(tmp_path: Path) -> None:
    gate = Gate(rules(allow=("Bash(git diff:*)",)))
    decision = check(gate, "Bash", {"command": "git diff --output=/tmp/x"}, tmp_path)
    assert not decision.allowed
    assert '"Bash(git diff --output=/tmp/x)"' in decision.message
    assert "Bash(git diff:*)" not in decision.message.split("pass", 1)[1]

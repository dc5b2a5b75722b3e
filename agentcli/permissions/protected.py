"""Protected paths: files that grant power, so a write to one is asked about every time.

A write to `.git/` can make git run a program (a hook, `core.fsmonitor`); a write to
agentcli's or Claude Code's configuration, a skill or an agent definition can grant tools
or change what runs. No mode (bypassPermissions included) and no broad rule (`Edit`,
`Write`, `Edit(**)`, `Bash(cp:*)`) approves such a write; only an allow rule that names
the path does (`Edit(./.git/config)`, `Edit(.commands/**)`, or the exact Bash command).

Paths are matched by name at any depth below the project (or the home folder, for paths
outside the project), case-insensitively (macOS and Windows file systems ignore case).
For Bash, the paths are those the command names: redirection targets and the arguments
of any program that is not a known reader, plus `git config` writes (`.git/config`).
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentcli.permissions.bash_flags import git_config_write
from agentcli.permissions.bash_rules import analyse
from agentcli.permissions.bash_runners import program_name
from agentcli.permissions.bash_syntax import Word, parse_script
from agentcli.permissions.paths import PathPattern
from agentcli.settings import agentcli_home

GIT = "it can make git run programs (hooks, core.fsmonitor, aliases) the next time git runs"
AGENT = "it is agentcli's or Claude Code's own configuration, which decides what runs without asking"
TOOLS = "it defines skills, commands or agents, which can grant tools"
RUNS = "other programs run what it says (editor tasks, shell start-up, package-manager and hook settings)"
PLUGIN = "it is a plugin this session loads (--plugin-dir): its hooks, servers and skills run or grant tools"

PROTECTED_DIRS: dict[str, str] = {
    ".git": GIT,
    ".husky": GIT,
    ".agentcli": AGENT,
    ".claude": AGENT,
    ".commands": TOOLS,
    ".vscode": RUNS,
    ".idea": RUNS,
    ".devcontainer": RUNS,
    ".cargo": RUNS,
    ".yarn": RUNS,
    ".mvn": RUNS,
}
PROTECTED_FILES: dict[str, str] = {
    ".mcp.json": AGENT,
    ".claude.json": AGENT,
    ".gitconfig": GIT,
    ".gitmodules": GIT,
    ".pre-commit-config.yaml": GIT,
    "lefthook.yml": GIT,
    "lefthook.yaml": GIT,
    ".lefthook.yml": GIT,
    ".lefthook.yaml": GIT,
    **dict.fromkeys(
        [
            ".bashrc", ".bash_profile", ".bash_login", ".bash_aliases", ".bash_logout", ".profile", ".zshrc",
            ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".envrc", ".npmrc", ".yarnrc", ".yarnrc.yml",
            ".pnpmfile.cjs", ".pnp.cjs", ".pnp.loader.mjs", "bunfig.toml", ".bunfig.toml", ".bazelrc",
            ".devcontainer.json", ".ripgreprc", "gradle-wrapper.properties", "maven-wrapper.properties",
        ],
        RUNS,
    ),
}  # fmt: skip
GIT_USER_CONFIG = (".config", "git")
"""`~/.config/git/`: git's user configuration."""
MEMORY = re.compile(r"projects/[^/]+/memory(/.*)?")
"""Under $AGENTCLI_HOME, the project memory the model may keep (everything else there is protected)."""

READERS = frozenset(
    {
        "cat", "head", "tail", "less", "more", "wc", "ls", "stat", "file", "grep", "egrep", "fgrep", "rg", "ag",
        "diff", "cmp", "tree", "du", "readlink", "realpath", "basename", "dirname", "test", "[", "echo", "printf",
        "md5sum", "sha1sum", "sha256sum", "sha512sum", "b2sum", "od", "hexdump", "strings", "jq", "nl", "column",
    }
)  # fmt: skip
"""Programs that only read the paths they are given (a redirection of theirs is still judged)."""
_WRITING_REDIRECTS = {">", ">>", ">|", "&>", "&>>", "<>"}


@dataclass(frozen=True)
class Protected:
    """A protected path a call would write, and why it is protected."""

    path: Path
    """The real path written."""
    root: Path
    """The protected folder it is in (or the file itself): an allow rule must name it."""
    reason: str


def protection(real: Path, project: Path, plugins: Sequence[Path] = ()) -> Protected | None:
    """Why writing `real` (an already resolved path) needs the user's yes every time, if it does;
    `plugins`, the resolved folders of the session's `--plugin-dir` plugins."""
    for root in plugins:
        if real == root or root in real.parents:
            return Protected(real, root, PLUGIN)
    home = _real(agentcli_home())
    if real == home or home in real.parents:
        rel = real.relative_to(home).as_posix() if real != home else ""
        return None if MEMORY.fullmatch(rel) else Protected(real, home, AGENT)
    base = _base_for(real, project)
    parts = real.relative_to(base).parts if base is not None else real.parts[1:]
    for index, part in enumerate(parts):
        name = part.lower()
        last = index == len(parts) - 1
        reason = PROTECTED_DIRS.get(name) or (PROTECTED_FILES.get(name) if last else None)
        if reason is None and tuple(p.lower() for p in parts[index : index + 2]) == GIT_USER_CONFIG:
            reason, index = GIT, index + 1
        if reason is not None:
            return Protected(real, (base or Path("/")).joinpath(*parts[: index + 1]), reason)
    return None


def _base_for(real: Path, project: Path) -> Path | None:
    """Names are judged below the project (or the home folder), not in the folders above them."""
    for base in (_real(project), _real(Path.home())):
        if real == base or base in real.parents:
            return base
    return None


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.normpath(path))


def pattern_names(pattern: PathPattern, protected: Protected, project: Path) -> bool:
    """Whether a path rule names `protected`: it matches the path and spells out its protected folder
    (`Edit(.git/**)`, `Edit(./.git/config)`), rather than reaching it through a wildcard (`Edit(**)`)."""
    if not pattern.matches(protected.path, project):
        return False
    text = pattern.pattern
    if not any(c in text for c in "*?[\\"):
        return True  # no wildcard at all: the rule names exactly this path
    anchored = text.startswith("/") or "/" in text.rstrip("/")
    if not anchored:
        return False
    literal: list[str] = []
    for part in text.strip("/").split("/"):
        if any(c in part for c in "*?[\\"):
            break
        literal.append(part)
    spelled = pattern.base(project).joinpath(*literal)
    return spelled == protected.root or protected.root in spelled.parents


# ----------------------------------------------------------------------------- Bash


def bash_targets(command: str, cwd: Path) -> list[Path]:
    """The real paths a Bash command names for writing (see the module docstring)."""
    script = parse_script(command)
    found: list[Path] = []
    for redirect in script.redirects:
        if redirect.operator in _WRITING_REDIRECTS and redirect.target is not None:
            found.extend(_paths(redirect.target, cwd))
    for word in script.assignments:  # D=.git; echo x > $D/config
        found.extend(_paths(word, cwd))
    for item in script.commands:
        words = item.words
        reader = bool(words) and words[0].literal and program_name(words[0]) in READERS
        if not reader:
            for word in words[1:]:
                found.extend(_paths(word, cwd))
    for invocation in analyse(command).invocations:
        if git_config_write([w.value or w.text for w in invocation.words]):
            found.append(_real(cwd / ".git" / "config"))
    return list(dict.fromkeys(found))


def _paths(word: Word, cwd: Path) -> Iterator[Path]:
    for text in _candidates(word):
        if not text or (text.startswith("-") and "=" not in text):
            continue
        expanded = os.path.expanduser(text) if text.startswith("~") else text
        for match in _expand_glob(expanded, cwd):
            yield _real(cwd / match)


def _candidates(word: Word) -> Iterable[str]:
    """The word, and what follows its first `=` (`--output=x`, `of=x`, `D=.git`)."""
    value = word.value
    if value is None and word.simple_expansions_only:
        value = os.path.expandvars(word.text.replace('"', ""))
        if "$" in value:
            return ()
    if value is None:
        return ()
    return (value, value.split("=", 1)[1]) if "=" in value else (value,)


def _expand_glob(text: str, cwd: Path) -> list[str]:
    """What bash may make of a glob: its matches, or (for a file still to be written) its folder's."""
    if not _globby(text):
        return [text]
    matches = glob.glob(text, root_dir=cwd, include_hidden=True)
    if matches:
        return matches
    folder, name = os.path.split(text)
    return [os.path.join(f, name) for f in _expand_glob(folder, cwd)] if folder and _globby(folder) else [text]


def _globby(text: str) -> bool:
    return any(c in text for c in "*?[")


def protected_writes(paths: Iterable[Path], project: Path, plugins: Sequence[Path] = ()) -> tuple[Protected, ...]:
    found = (protection(path, project, plugins) for path in paths)
    return tuple(p for p in found if p is not None)

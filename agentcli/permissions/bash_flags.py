"""Flags that turn a harmless-looking command into one that writes files or runs programs.

A prefix allow rule such as `Bash(git diff:*)` means "let me look at diffs", not "let it
write anywhere": `git diff --output=/elsewhere/file` does the latter. `risky_flag(words)`
names the first such flag in a command, so the gate asks instead of letting the prefix
rule cover it (an exact rule that spells out the whole command still allows it).

This is a short table for the programs people commonly allow, not a complete catalogue;
docs/permissions.md lists it (flags a prefix rule does not cover).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

WRITES = "writes a file"
RUNS = "runs another program"
CONFIG = "changes configuration"


@dataclass(frozen=True)
class Flag:
    spelling: str
    """`--output` (also matches `--output=…`), `-exec` (a whole word), or `-o` (a letter in a cluster)."""
    reason: str

    def matches(self, word: str) -> bool:
        if self.spelling.startswith("--") or len(self.spelling) > 2:
            return word == self.spelling or word.startswith(self.spelling + "=")
        cluster = re.match(r"-([A-Za-z]+)", word)
        return not word.startswith("--") and cluster is not None and self.spelling[1] in cluster.group(1)


def _flags(reason: str, *spellings: str) -> tuple[Flag, ...]:
    return tuple(Flag(s, reason) for s in spellings)


PACKAGE_MANAGER = (
    *_flags(RUNS, "--script-shell", "--node-options", "--call"),
    *_flags(CONFIG, "--prefix", "--userconfig", "--globalconfig"),
)
CURL = (
    *_flags(WRITES, "-o", "-O", "--output", "--output-dir", "--remote-name", "--remote-name-all", "-D",
            "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr", "-K", "--config"),
    *_flags("sends a file", "-T", "--upload-file"),
)  # fmt: skip

PROGRAM_FLAGS: dict[str, tuple[Flag, ...]] = {
    "find": (
        *_flags(RUNS, "-exec", "-execdir", "-ok", "-okdir"),
        *_flags(WRITES, "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    ),
    "sort": (*_flags(WRITES, "-o", "--output"), *_flags(RUNS, "--compress-program")),
    "tar": (
        *_flags(
            RUNS,
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "-F",
            "--new-volume-script",
            "--rsh-command",
            "--rmt-command",
        ),
    ),
    "rg": _flags(RUNS, "--pre", "--pre-glob"),
    "make": (*_flags(RUNS, "-f", "--file", "--makefile", "--eval", "-E", "-C", "--directory"),),
    "pytest": (
        *_flags(RUNS, "-p", "-c", "--config-file", "-o", "--override-ini"),
        *_flags(WRITES, "--basetemp", "--junitxml", "--junit-xml", "--pastebin"),
    ),
    "cargo": _flags(RUNS, "--config", "-Z"),
    "go": (*_flags(RUNS, "-exec", "-toolexec"), *_flags(WRITES, "-o")),
    "npm": PACKAGE_MANAGER,
    "pnpm": PACKAGE_MANAGER,
    "yarn": PACKAGE_MANAGER,
    "bun": PACKAGE_MANAGER,
    "curl": CURL,
    "wget": (
        *_flags(
            WRITES,
            "-O",
            "-o",
            "-a",
            "-P",
            "--output-document",
            "--output-file",
            "--append-output",
            "--directory-prefix",
        ),
        *_flags(RUNS, "-e", "--execute"),
    ),
    "rsync": _flags(RUNS, "-e", "--rsh", "--rsync-path"),
    "ssh": _flags(RUNS, "-o", "-F"),
    "scp": _flags(RUNS, "-o", "-S", "-F"),
    "man": _flags(RUNS, "-P", "--pager", "-H", "--html"),
    "yq": _flags(WRITES, "-i", "--inplace"),
    "zip": _flags(RUNS, "-TT", "--unzip-command"),
}

GIT_GLOBAL = (*_flags(RUNS, "-c", "--config-env", "--exec-path"),)
"""git options before the subcommand."""
GIT_OUTPUT = _flags(WRITES, "--output", "--output-directory")
GIT_SUBCOMMAND: dict[str, tuple[Flag, ...]] = {
    "diff": GIT_OUTPUT,
    "log": GIT_OUTPUT,
    "show": GIT_OUTPUT,
    "range-diff": GIT_OUTPUT,
    "format-patch": (*GIT_OUTPUT, *_flags(WRITES, "-o")),
    "archive": (*_flags(WRITES, "-o", "--output"), *_flags(RUNS, "--exec", "--remote")),
    "fetch": _flags(RUNS, "--upload-pack"),
    "pull": _flags(RUNS, "--upload-pack"),
    "clone": (*_flags(RUNS, "--upload-pack", "-u", "--template", "-c", "--config"),),
    "ls-remote": _flags(RUNS, "--upload-pack", "-u"),
    "push": _flags(RUNS, "--receive-pack", "--exec"),
    "rebase": _flags(RUNS, "-x", "--exec"),
    "grep": _flags(RUNS, "-O", "--open-files-in-pager"),
    "difftool": _flags(RUNS, "-x", "--extcmd", "-t", "--tool"),
    "mergetool": _flags(RUNS, "-t", "--tool"),
}
GIT_ALWAYS_RISKY = {
    "bisect": ("run", RUNS),
    "submodule": ("foreach", RUNS),
    "filter-branch": ("", RUNS),
}
"""git subcommands (or their sub-subcommand) that run commands whatever the flags."""
GIT_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "get", "list"})
GIT_CONFIG_WRITES = frozenset(
    {"--unset", "--unset-all", "--add", "--replace-all", "--rename-section", "--remove-section", "-e", "--edit",
     "set", "unset", "rename-section", "remove-section", "edit"}
)  # fmt: skip


def risky_flag(words: Sequence[str]) -> str | None:
    """`--output (writes a file)` for the first flag in `words` that writes files or runs programs."""
    if not words:
        return None
    program = os.path.basename(words[0])
    if program == "git":
        return _git(words[1:])
    if program in ("python", "python3") and len(words) > 2 and words[1] == "-m":
        program, words = words[2], words[2:]
    if program == "sed":
        return _sed(words[1:])
    if program in ("awk", "gawk", "mawk", "nawk"):
        return _awk(words[1:])
    flags = PROGRAM_FLAGS.get(program, ())
    options = _options(words[1:])
    if program == "tar" and len(words) > 1 and not words[1].startswith("-"):
        options = ["-" + words[1], *options]  # old-style `tar xIf …`
    return _first(flags, options)


def _options(words: Sequence[str]) -> list[str]:
    """The option-like words before `--`."""
    found: list[str] = []
    for word in words:
        if word == "--":
            break
        if word.startswith("-") and word != "-":
            found.append(word)
    return found


def _first(flags: Sequence[Flag], options: Sequence[str]) -> str | None:
    for option in options:
        for flag in flags:
            if flag.matches(option):
                return f"{flag.spelling} ({flag.reason})"
    return None


GIT_OPTIONS_WITH_ARGUMENT = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
)
"""git options before the subcommand that take the next word as their argument."""


def _git(args: Sequence[str]) -> str | None:
    index = 0
    while index < len(args) and args[index].startswith("-"):
        if found := _first(GIT_GLOBAL, [args[index]]):
            return found
        index += 2 if args[index] in GIT_OPTIONS_WITH_ARGUMENT else 1
    if index >= len(args):
        return None
    subcommand, rest = args[index], args[index + 1 :]
    if subcommand == "config":
        return f"git config ({CONFIG})" if _config_writes(rest) else None
    always = GIT_ALWAYS_RISKY.get(subcommand)
    if always is not None and (not always[0] or always[0] in rest):
        what, reason = always
        return f"git {subcommand}{' ' + what if what else ''} ({reason})"
    return _first(GIT_SUBCOMMAND.get(subcommand, ()), _options(rest))


def _config_writes(args: Sequence[str]) -> bool:
    values = [w for w in args if not w.startswith("-")]
    if any(w in GIT_CONFIG_WRITES for w in args):
        return True
    return len(values) >= 2 and not any(w in GIT_CONFIG_READS for w in args)


def git_config_write(words: Sequence[str]) -> bool:
    """Whether `words` is a `git config` that changes a setting (it writes .git/config or ~/.gitconfig)."""
    return bool(words) and os.path.basename(words[0]) == "git" and (_git(words[1:]) or "").startswith("git config")


IN_PLACE = (Flag("-i", WRITES), Flag("--in-place", WRITES))
SCRIPT_FILE = (Flag("-f", RUNS), Flag("--file", RUNS))


def _sed(args: Sequence[str]) -> str | None:
    """`-i` edits files; a script's `w`/`W` commands (or `s///w`) write and `e` runs commands."""
    scripts: list[str] = []
    expect_script = False
    for word in args:
        if expect_script:
            scripts.append(word)
            expect_script = False
        elif word in ("-e", "--expression"):
            expect_script = True
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif found := _first((*IN_PLACE, *SCRIPT_FILE), [word]):
            return found
        elif not word.startswith("-") and not scripts:
            scripts.append(word)
    if any(not _sed_script_is_safe(script) for script in scripts):
        return "w, W or e in the sed script (writes a file or runs a command)"
    return None


_SED_SIMPLE_COMMANDS = set("pdqQnNgGhHxl=zFDPIM{}!")


def _sed_script_is_safe(script: str) -> bool:
    """True only for scripts made of commands that neither write files nor run commands."""
    index, length = 0, len(script)
    while index < length:
        char = script[index]
        if char in " \t\n;" or char.isdigit() or char in "$,~+":
            index += 1
        elif char == "/" or (char == "\\" and index + 1 < length):  # an address /re/ or \cREc
            delimiter = script[index + 1] if char == "\\" else "/"
            index = _skip_delimited(script, index + (2 if char == "\\" else 1), delimiter)
        elif char in "sy":
            if index + 1 >= length:
                return False
            delimiter = script[index + 1]
            index = _skip_delimited(script, _skip_delimited(script, index + 2, delimiter), delimiter)
            flags = re.match(r"[gpiImM0-9ew]*", script[index:])
            used = flags.group(0) if flags is not None else ""
            if "w" in used or "e" in used:
                return False
            index += len(used)
        elif char in "aic#rR":  # text, a comment or a file name: to the end of the line
            index = _line_end(script, index)
        elif char in "btT:":  # a label: to `;` or the end of the line
            stop = re.compile(r"[;\n]").search(script, index)
            index = length if stop is None else stop.start()
        elif char in _SED_SIMPLE_COMMANDS:
            index += 1
        else:
            return False  # w, W, e, or anything not understood
    return True


def _line_end(script: str, index: int) -> int:
    """Where the line at `index` ends (a backslash before the newline continues it)."""
    while index < len(script):
        if script[index] == "\\":
            index += 2
            continue
        if script[index] == "\n":
            return index
        index += 1
    return index


def _skip_delimited(script: str, index: int, delimiter: str) -> int:
    while index < len(script):
        if script[index] == "\\":
            index += 2
            continue
        if script[index] == delimiter:
            return index + 1
        index += 1
    return index


def _awk(args: Sequence[str]) -> str | None:
    for word in args:
        if word in ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"):
            return f"{word} (runs a script file)"
        if not word.startswith("-") and re.search(r"system|getline|[|>]", word):
            return "system(), a pipe or a redirection in the awk program (runs a command or writes a file)"
    return None

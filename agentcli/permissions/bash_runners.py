"""Programs that run other programs from their arguments, and how each one reads them.

`effects(name, args)` says what running `name args…` runs besides itself: another
command (`timeout -s KILL 5 rm x` → `rm x`), shell code (`bash -c '…'`, `eval`, `trap`,
`flock f -c '…'`), or something the gate cannot follow statically (`source`, a shell
reading its input, an unknown option that may or may not take an argument). Each runner's
options are read with its own grammar, `--` included; anything unexpected is `Opaque`,
never a guess — deny and ask rules treat it as matching.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentcli.permissions.bash_flags import GIT_OPTIONS_WITH_ARGUMENT
from agentcli.permissions.bash_syntax import Word


@dataclass(frozen=True)
class Runs:
    """Runs this command (the program first)."""

    words: tuple[Word, ...]


@dataclass(frozen=True)
class Code:
    """Runs this word as shell code."""

    word: Word


@dataclass(frozen=True)
class Opaque:
    """Runs something the gate cannot determine; `reason` says what, for the user and the model."""

    reason: str


Effect = Runs | Code | Opaque

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "ash", "fish", "busybox-sh"})
UNFOLLOWABLE = frozenset(
    {
        "parallel", "sem", "nsenter", "setpriv", "prlimit", "systemd-run", "firejail", "bwrap", "proot",
        "fakeroot", "fakechroot", "xvfb-run", "dbus-run-session", "dbus-launch", "catchsegv", "valgrind",
        "perf", "gdb", "ltrace", "faketime", "tsp", "at", "batch", "crontab", "expect", "tmux", "screen",
        "ssh-agent", "sg", "newgrp", "pkexec", "run-parts", "entr", "inotifywait", "ts-node", "nodemon",
    }
)  # fmt: skip
"""Programs that run commands in ways not followed here: with a deny rule, never let through."""


@dataclass(frozen=True)
class Runner:
    """How a program that runs a command reads its options.

    Options are written without dashes: `short` flags, `short_arg` options taking an
    argument (attached or as the next word), `long`/`long_arg` likewise for `--name`.
    """

    short: str = ""
    short_arg: str = ""
    long: frozenset[str] = frozenset()
    long_arg: frozenset[str] = frozenset()
    operands: int = 0
    """Words before the command that are not options (timeout's DURATION, flock's FILE)."""
    assignments: bool = False
    """NAME=VALUE words may come before the command (env, sudo)."""
    code: frozenset[str] = frozenset()
    """Options whose argument is shell code (`c` for `script -c`, `command` for `--command`)."""
    split: frozenset[str] = frozenset()
    """Options whose argument is split into more words and read on (env -S)."""
    via_shell: frozenset[str] = frozenset()
    """Flags after which the command words are run by a shell (sudo -s)."""
    no_command: frozenset[str] = frozenset()
    """Options that mean no command runs (command -v, ionice -p)."""
    numeric: bool = False
    """Options like `-10` (nice)."""
    dash: bool = False
    """A lone `-` is an option (env -, su -)."""
    permute: bool = False
    """Options may follow operands, and the command only comes through a code option (script, su)."""
    code_after_operands: bool = False
    """`-c CODE` may also follow the operands (flock FILE -c CODE)."""
    joined: bool = False
    """The command words are joined and run by `sh -c` (watch), unless an `exec` flag is given."""
    bare: Literal["nothing", "shell"] = "nothing"
    """What runs without a command: nothing, or an interactive shell (script, unshare, chroot)."""


def _r(
    short: str = "",
    short_arg: str = "",
    long: str = "",
    long_arg: str = "",
    **kwargs: object,
) -> Runner:
    return Runner(short, short_arg, frozenset(long.split()), frozenset(long_arg.split()), **kwargs)  # type: ignore[arg-type]


RUNNERS: dict[str, Runner] = {
    "env": _r(
        "i0v", "uCSa", "ignore-environment null debug list-signal-handling block-signal default-signal ignore-signal",
        "unset chdir split-string argv0", assignments=True, split=frozenset({"S", "split-string"}), dash=True,
    ),
    "nice": _r("", "n", "", "adjustment", numeric=True),
    "nohup": _r(),
    "timeout": _r("v", "sk", "preserve-status foreground verbose", "signal kill-after", operands=1),
    "stdbuf": _r("", "ioe", "", "input output error"),
    "setsid": _r("cfw", "", "ctty fork wait"),
    "ionice": _r("tV", "cnpPu", "ignore", "class classdata pid pgid uid",
                 no_command=frozenset({"p", "P", "u", "pid", "pgid", "uid"})),
    "chrt": _r("abdefiomrRv", "TPD", "all-tasks batch deadline fifo idle other rr reset-on-fork verbose max ext",
               "sched-runtime sched-period sched-deadline", operands=1,
               no_command=frozenset({"p", "pid", "m", "max"})),
    "taskset": _r("acpV", "", "all-tasks cpu-list pid", operands=1, no_command=frozenset({"p", "pid"})),
    "sudo": _r(
        "AbEHnPSisKkBNV", "CDghpRTuUrt",
        "askpass background preserve-env set-home non-interactive preserve-groups stdin shell login "
        "reset-timestamp remove-timestamp bell list validate version edit",
        "chdir group host prompt chroot command-timeout user other-user role type close-from",
        assignments=True, via_shell=frozenset({"s", "i", "shell", "login"}),
        no_command=frozenset({"l", "list", "v", "validate", "K", "remove-timestamp", "V", "version", "e", "edit"}),
    ),
    "doas": _r("Lns", "Cu", via_shell=frozenset({"s"}), no_command=frozenset({"L", "C"})),
    "exec": _r("cl", "a"),
    "command": _r("pvV", no_command=frozenset({"v", "V"})),
    "builtin": _r(),
    "time": _r("apqvV", "fo", "append portability quiet verbose version help", "format output"),
    "flock": _r("sexnoFuvhV", "wEc", "shared exclusive unlock nonblock nb close no-fork verbose",
                "timeout wait conflict-exit-code command", operands=1, code=frozenset({"c", "command"}),
                code_after_operands=True),
    "script": _r("aefqhVkt", "cEIOBTmo", "append return flush force quiet help version",
                 "command echo log-in log-out log-io log-timing logging-format output-limit",
                 code=frozenset({"c", "command"}), permute=True, bare="shell"),
    "su": _r("lmpfP", "csgGwC", "login preserve-environment fast pty",
             "command session-command shell group supp-group whitelist-environment",
             code=frozenset({"c", "command", "C", "session-command"}), dash=True, permute=True, bare="shell"),
    "strace": _r("cCdDfFhiqrtTvVwxyzkn", "abeIoOpPsSuUEX",
                 "summary-only summary follow-forks output-separately instruction-pointer quiet relative-timestamps "
                 "timestamps syscall-times no-abbrev version help decode-fds stack-trace summary-wall-clock "
                 "seccomp-bpf kill-on-exit",
                 "output expr trace signal status pid string-limit user env columns trace-path attach"),
    "unshare": _r("muinpUCTfrcV", "RwSGl",
                  "mount uts ipc net pid user cgroup time fork map-root-user map-current-user kill-child "
                  "mount-proc mount-binfmt keep-caps",
                  "propagation setgroups map-user map-group map-users map-groups root wd setuid setgid "
                  "monotonic boottime", bare="shell"),
    "chroot": _r("", "", "skip-chdir", "userspec groups", operands=1, bare="shell"),
    "watch": _r("bcCdegprtwx", "nq",
                "beep color no-color differences errexit chgexit precise no-rerun no-title no-wrap exec help version",
                "interval equexit shotsdir", joined=True),
    "busybox": _r("", "", "list list-full help install",
                  no_command=frozenset({"list", "list-full", "help", "install"})),
    "toybox": _r("", "", "help version", no_command=frozenset({"help", "version"})),
    "caffeinate": _r("dimsu", "tw"),
    "unbuffer": _r("p"),
    "npx": _r("yq", "pc", "yes no quiet prefer-offline prefer-online offline ignore-existing no-install",
              "package call cache registry", code=frozenset({"c", "call"})),
    "uvx": _r("qvn", "p", "quiet verbose offline isolated no-cache from-cache", "from with python index-url"),
}  # fmt: skip
RUNNERS["pnpx"] = RUNNERS["bunx"] = RUNNERS["npx"]
RUNNERS["runuser"] = RUNNERS["su"]

SUBCOMMAND_RUNNERS: dict[tuple[str, str], Runner] = {
    ("npm", "exec"): RUNNERS["npx"],
    ("npm", "x"): RUNNERS["npx"],
    ("pnpm", "exec"): _r("r", "", "recursive parallel shell-mode no-bail", "filter workspace-concurrency"),
    ("pnpm", "dlx"): _r("", "c", "", "package", code=frozenset({"c"})),
    ("yarn", "exec"): _r(),
    ("yarn", "dlx"): _r("q", "p", "quiet", "package"),
    ("bun", "x"): RUNNERS["npx"],
    ("uv", "run"): _r("qvm", "p",
                      "quiet verbose no-project frozen locked isolated no-sync all-extras all-packages no-dev "
                      "only-dev script module offline no-cache active",
                      "with with-editable with-requirements python extra package group env-file directory project"),
    ("poetry", "run"): _r("qvn", "P", "quiet verbose no-interaction no-ansi", "directory project"),
    ("pdm", "run"): _r("qvg", "p", "quiet verbose global list", "project venv"),
    ("hatch", "run"): _r(),
    ("pipenv", "run"): _r(),
    ("pipx", "run"): _r("", "", "verbose quiet no-cache", "spec python pip-args index-url"),
    ("conda", "run"): _r("nps", "", "no-capture-output live-stream", "name prefix cwd"),
    ("mise", "exec"): _r("", "C", "", "cd jobs"),
    ("mise", "x"): _r("", "C", "", "cd jobs"),
    ("direnv", "exec"): _r(operands=1),
}  # fmt: skip

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)


def effects(name: str, args: Sequence[Word]) -> list[Effect]:
    """What running `name` with `args` runs besides `name` itself."""
    if name in SHELLS:
        return _shell(name, args)
    special = _BUILTINS.get(name)
    if special is not None:
        return special(args)
    if name in UNFOLLOWABLE:
        return [Opaque(f"`{name}` runs commands in ways the permission rules cannot follow")]
    if name == "find":
        return _find(args)
    if name == "xargs":
        return _xargs(args)
    if name == "git":
        return _git(args)
    runner = RUNNERS.get(name)
    if runner is None and args and args[0].literal:
        runner = SUBCOMMAND_RUNNERS.get((name, args[0].value or ""))
        if runner is not None:
            args = args[1:]
    if runner is None:
        return []
    return _run(name, runner, list(args))


# ------------------------------------------------------------------- shells and builtins


def _shell(name: str, args: Sequence[Word]) -> list[Effect]:
    """sh/bash/zsh…: `-c CODE` (options and `--` read properly), a script file, or its input."""
    command_mode = stdin_mode = False
    index = 0
    while index < len(args):
        word = args[index]
        if word.value is None:
            return [Opaque(f"`{name}` is given `{word.text}`, which the gate cannot read")]
        value = word.value
        if value == "--" or value == "-":
            index += 1
            break
        if value.startswith("--"):
            option, has_value, attached = value[2:].partition("=")
            if option == "command":  # fish
                if has_value:
                    return [Code(Word.of(attached))]
                if index + 1 < len(args):
                    return [Code(args[index + 1])]
                return [Opaque(f"`{name}` is missing its command")]
            index += 2 if option in ("rcfile", "init-file") and not has_value else 1
            continue
        if value[:1] in "-+" and len(value) > 1:
            letters = value[1:]
            command_mode |= "c" in letters
            stdin_mode |= "s" in letters
            index += 1
            if letters[-1] in "oO":  # -o OPTION / -O SHOPT take the next word
                index += 1
            continue
        break
    operands = list(args[index:])
    if command_mode:
        if not operands:
            return [Opaque(f"`{name} -c` is missing its command")]
        return [Code(operands[0])]
    if stdin_mode or not operands:
        return [Opaque(f"`{name}` reads the commands to run from its input, which the gate cannot see")]
    if not operands[0].literal:
        return [Opaque(f"`{name}` runs a script whose name or content is only known when it runs")]
    return []  # a script file: like running ./script, its content is not judged


def _eval(args: Sequence[Word]) -> list[Effect]:
    joined = _joined(args)
    return [Code(joined)] if joined is not None else [Opaque("`eval` runs text that is only known when it runs")]


def _source(args: Sequence[Word]) -> list[Effect]:
    return [Opaque("`source` runs the commands of a file, which the gate cannot see")]


def _trap(args: Sequence[Word]) -> list[Effect]:
    words = [w for w in args if w.value not in ("--",)]
    if len(words) < 2 or (words[0].value or "").startswith("-"):
        return []
    if words[0].value is None:
        return [Opaque("`trap` is given code that is only known when it runs")]
    return [Code(words[0])]


def _alias(args: Sequence[Word]) -> list[Effect]:
    found: list[Effect] = []
    for word in args:
        if word.value is None:
            found.append(Opaque("`alias` defines a command that is only known when it runs"))
        elif "=" in word.value:
            found.append(Code(Word.of(word.value.split("=", 1)[1])))
    return found


def _mapfile(args: Sequence[Word]) -> list[Effect]:
    for index, word in enumerate(args):
        value = word.value or ""
        if value.startswith("-C"):
            callback = Word.of(value[2:]) if len(value) > 2 else (args[index + 1] if index + 1 < len(args) else None)
            if callback is None or callback.value is None:
                return [Opaque("`mapfile -C` runs a callback that is only known when it runs")]
            return [Code(callback)]
    return []


def _rebinding(what: str) -> list[Effect]:
    return [Opaque(f"{what} changes which program a command name runs")]


def _hash(args: Sequence[Word]) -> list[Effect]:
    return _rebinding("`hash -p`") if any((w.value or "-p").startswith("-p") for w in args) else []


def _enable(args: Sequence[Word]) -> list[Effect]:
    return _rebinding("`enable -f`") if any((w.value or "-f").startswith("-f") for w in args) else []


def _coproc(args: Sequence[Word]) -> list[Effect]:
    return [Opaque("`coproc` starts a command in a way the permission rules do not follow")]


_BUILTINS = {
    "eval": _eval,
    "source": _source,
    ".": _source,
    "trap": _trap,
    "alias": _alias,
    "mapfile": _mapfile,
    "readarray": _mapfile,
    "hash": _hash,
    "enable": _enable,
    "coproc": _coproc,
}


# ------------------------------------------------------------------- find, xargs, git


def _find(args: Sequence[Word]) -> list[Effect]:
    """Each `-exec`/`-execdir`/`-ok`/`-okdir … ;` (or `+`) is a command of its own."""
    found: list[Effect] = []
    index = 0
    while index < len(args):
        value = args[index].value
        if value is None:
            index += 1
            continue
        if value in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end].value not in (";", "+"):
                end += 1
            inner = tuple(args[index + 1 : end])
            found.append(Runs(inner) if inner else Opaque(f"`find {value}` is missing its command"))
            index = end
        index += 1
    return found


XARGS = _r(
    "0rtpx", "adEILnPs",
    "null no-run-if-empty verbose interactive exit show-limits open-tty",
    "arg-file delimiter max-lines max-args max-procs max-chars process-slot-var",
)  # fmt: skip
_XARGS_OPTIONAL = re.compile(r"-(e|i|l).*|--(eof|replace|max-lines)(=.*)?", re.DOTALL)


def _xargs(args: Sequence[Word]) -> list[Effect]:
    # -e[EOF], -i[REPL], -l[N] take an optional attached argument: drop them before the grammar.
    kept = [w for w in args if not (w.value is not None and _XARGS_OPTIONAL.fullmatch(w.value))]
    return _run("xargs", XARGS, kept)


def _git(args: Sequence[Word]) -> list[Effect]:
    """`git -c alias.x='!cmd' x` runs cmd: a setting given before the subcommand may define an alias."""
    index = 0
    while index < len(args):
        value = args[index].value
        if value is None or not value.startswith("-"):
            return []  # the subcommand: git's own options end here
        setting: str | None = None
        if value in GIT_OPTIONS_WITH_ARGUMENT:
            index += 1
            if value in ("-c", "--config-env"):
                setting = args[index].value if index < len(args) else ""
        elif value.startswith("-c"):
            setting = value[2:]
        if value in ("-c", "--config-env") or value.startswith("-c"):
            if setting is None:
                return [Opaque("`git -c` is given a setting that is only known when it runs")]
            if setting.lower().startswith("alias."):
                return [Opaque("`git -c alias.…` defines an alias, which can run any command")]
        index += 1
    return []


# ------------------------------------------------------------------- the generic grammar


@dataclass
class _Parsed:
    rest: list[Word] = field(default_factory=list)
    code: Word | None = None
    via_shell: bool = False
    no_command: bool = False
    exec_flag: bool = False


def _run(name: str, runner: Runner, words: list[Word]) -> list[Effect]:
    try:
        parsed = _parse(runner, words)
    except _Unreadable as error:
        return [Opaque(f"`{name}` {error}")]
    if parsed.no_command:
        return []
    if parsed.code is not None:
        return [Code(parsed.code)]
    if not parsed.rest:
        if runner.bare == "shell" or parsed.via_shell:
            return [Opaque(f"`{name}` without a command starts a shell, whose commands the gate cannot see")]
        return []
    if parsed.via_shell or (runner.joined and not parsed.exec_flag):
        joined = _joined(parsed.rest)
        return [Code(joined)] if joined is not None else [Opaque(f"`{name}` runs text only known when it runs")]
    return [Runs(tuple(parsed.rest))]


class _Unreadable(Exception):
    pass


def _parse(runner: Runner, words: list[Word]) -> _Parsed:
    parsed = _Parsed()
    operands = runner.operands
    index = 0
    while index < len(words):
        word = words[index]
        value = word.value
        if value is None:
            if runner.permute:
                index += 1
                continue
            raise _Unreadable(f"is given `{word.text}`, which may be an option or the command: the gate cannot tell")
        if value == "--":
            index += 1
            break
        if value == "-" and runner.dash:
            index += 1
            continue
        if value.startswith("--") and len(value) > 2:
            index = _long_option(runner, words, index, parsed)
            continue
        if value.startswith("-") and len(value) > 1:
            if runner.numeric and value[1:].isdigit():
                index += 1
                continue
            index = _short_options(runner, words, index, parsed)
            continue
        if runner.assignments and _ASSIGNMENT.fullmatch(value):
            index += 1
            continue
        if runner.permute:
            index += 1
            continue
        if operands:
            operands -= 1
            index += 1
            if not operands and runner.code_after_operands and index < len(words):
                option = (words[index].value or "").lstrip("-")
                if option in runner.code and index + 1 < len(words):
                    parsed.code = words[index + 1]
                    return parsed
            continue
        break
    if not runner.permute:  # a permuting runner's command only ever comes through a code option
        parsed.rest = words[index + operands :]
    return parsed


def _long_option(runner: Runner, words: list[Word], index: int, parsed: _Parsed) -> int:
    name, has_value, attached = (words[index].value or "")[2:].partition("=")
    if name in runner.long_arg:
        argument, index = _argument(words, index, attached if has_value else None, f"--{name}")
        _option_argument(runner, name, argument, words, index, parsed)
    elif name not in runner.long:
        raise _Unreadable(f"is given --{name}, an option the permission rules do not know")
    _flag(runner, name, parsed)
    return index + 1


def _short_options(runner: Runner, words: list[Word], index: int, parsed: _Parsed) -> int:
    letters = (words[index].value or "")[1:]
    for position, letter in enumerate(letters):
        if letter in runner.short_arg:
            argument, index = _argument(words, index, letters[position + 1 :] or None, f"-{letter}")
            _option_argument(runner, letter, argument, words, index, parsed)
            _flag(runner, letter, parsed)
            break
        if letter not in runner.short:
            raise _Unreadable(f"is given -{letter}, an option the permission rules do not know")
        _flag(runner, letter, parsed)
    return index + 1


def _argument(words: list[Word], index: int, attached: str | None, option: str) -> tuple[Word, int]:
    """An option's argument, attached (`--name=value`, `-xvalue`) or the next word, and where it ends."""
    if attached is not None:
        return Word.of(attached), index
    if index + 1 >= len(words):
        raise _Unreadable(f"is missing the argument of {option}")
    return words[index + 1], index + 1


def _flag(runner: Runner, option: str, parsed: _Parsed) -> None:
    parsed.via_shell |= option in runner.via_shell
    parsed.no_command |= option in runner.no_command
    parsed.exec_flag |= option in ("x", "exec")


def _option_argument(
    runner: Runner, option: str, argument: Word, words: list[Word], index: int, parsed: _Parsed
) -> None:
    if option in runner.code:
        parsed.code = argument
    elif option in runner.split:
        if argument.value is None or "$" in argument.value:
            raise _Unreadable(f"splits `{argument.text}`, which is only known when it runs")
        try:
            split = [Word.of(part) for part in shlex.split(argument.value)]
        except ValueError:
            raise _Unreadable(f"is given -{option} `{argument.text}`, which cannot be split") from None
        words[index + 1 : index + 1] = split


def _joined(words: Sequence[Word]) -> Word | None:
    if any(w.value is None for w in words):
        return None
    return Word.of(" ".join(w.value or "" for w in words))


def program_name(word: Word) -> str:
    """`/usr/bin/rm` → `rm`."""
    return os.path.basename(word.value or "")

"""Turning a skill and its arguments into the text sent to the model.

- `$ARGUMENTS` → the whole argument string; `$1`…`$9` → shell-style words (quotes group);
  `$ARGUMENTS[N]` → word N counted from 0, as Claude Code's skills documentation has it.
- `${CLAUDE_SKILL_DIR}` → the folder of the skill's file (a skill folder: where its scripts are).
- `` !`cmd` `` → the command's output, run now through `run_command` (which checks
  permission first). Arguments inside a command are shell-quoted, so they stay data.
- `@path` → the path, with the file's contents (or a folder listing) attached after the
  text; a path that does not exist keeps a note saying so (the rest still runs, as in Claude
  Code). Paths are relative to the project; `~/` is allowed. `check_mention` decides first
  whether a path may be attached (files outside the project need approval; see
  skills/invoke.py); when it may not, a note stands in the text instead.
- Arguments given but not placed (no `$ARGUMENTS`, and `$1`…`$N` do not take every word)
  → they are appended as `ARGUMENTS: …`, so nothing the user typed is lost.

`!` and `@` are not expanded inside fenced code blocks; `@` not inside inline code either.
A skill folder's text is headed by its path (`Base directory for this skill: …`), so the
model knows where its supporting files are.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from agentcli.context.instructions import looks_like_path, unfenced_lines
from agentcli.context.outside import OutsideFiles, project_top
from agentcli.regular_file import read_regular_file
from agentcli.skills.catalog import Skill
from agentcli.skills.frontmatter import SkillFileError
from agentcli.truncate import cap_middle

CommandRunner = Callable[[str], str]
"""Runs one `!` command (after the permission check) and returns its output; raises SkillFileError."""


class MentionCheck(Protocol):
    def __call__(self, mention: str, path: Path, from_arguments: bool, /) -> str | None:
        """Before `@mention` (naming `path`; `from_arguments` when `$ARGUMENTS`/`$N` supplied it) is
        attached: None to attach it, or the text that stands instead (a note saying why not).
        May raise SkillFileError: nothing is sent."""
        ...


MAX_ATTACHMENT_CHARS = 50_000
MAX_ATTACHMENT_BYTES = 8 << 20
MAX_LISTING_ENTRIES = 200

_FENCE = re.compile(r"^\s*(```|~~~)")
_TOKEN = re.compile(
    r"!`(?P<cmd>[^`\n]+)`"
    r"|(?P<span>`[^`\n]*`)"
    r"|(?<![^\s(\[])@(?P<path>[^\s`]+)"
    r"|\$ARGUMENTS\[(?P<index>\d+)\]"
    r"|\$ARGUMENTS"
    r"|\$(?P<pos>[1-9])"
    r"|\$\{CLAUDE_SKILL_DIR\}"
)
_ARGS = re.compile(r"\$ARGUMENTS\[\d+\]|\$ARGUMENTS|\$[1-9]")
"""What the arguments fill in."""
_VALUES = re.compile(rf"{_ARGS.pattern}|\$\{{CLAUDE_SKILL_DIR\}}")
"""What is replaced in the text: the arguments and the skill's folder."""
SKILL_DIR = "${CLAUDE_SKILL_DIR}"
BASE_DIRECTORY = "Base directory for this skill: "
_TRAILING = ".,;:!?)]}'\""


def split_arguments(args: str) -> list[str]:
    """Shell-style words; an unbalanced quote (`/fix don't`) falls back to plain whitespace splitting."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def expand_skill(
    skill: Skill, args: str, cwd: Path, run_command: CommandRunner, check_mention: MentionCheck | None = None
) -> str:
    """The text for the model; raises SkillFileError (nothing should be sent) on any problem.

    Without `check_mention`, only paths inside the project are attached."""
    check = check_mention or approved_only(OutsideFiles(project_top(cwd)))
    return _Expander(skill, args.strip(), cwd, run_command, check).expand()


def mention_path(mention: str, cwd: Path) -> Path:
    """The path `@mention` names: relative to the project, `~/` allowed."""
    path = Path(mention).expanduser()
    return path if path.is_absolute() else cwd / path


def fixed_mentions(skill: Skill) -> Iterator[str]:
    """The `@path` mentions written in the skill text itself (no `$ARGUMENTS`/`$N` in them)."""
    for line in unfenced_lines(skill.body):
        for match in _TOKEN.finditer(line):
            mention = (match.group("path") or "").rstrip(_TRAILING)
            if mention and not _ARGS.search(mention):
                yield mention.replace(SKILL_DIR, str(skill.path.parent))


def approved_only(outside: OutsideFiles) -> MentionCheck:
    """Attach what is inside the project or approved; anything else gets a note instead."""

    def check(mention: str, path: Path, from_arguments: bool) -> str | None:
        return None if outside.may_read(path) else f"[agentcli: {outside.note(mention, path, 'attached')}]"

    return check


class _Expander:
    def __init__(
        self, skill: Skill, args: str, cwd: Path, run_command: CommandRunner, check_mention: MentionCheck
    ) -> None:
        self.skill = skill
        self.args = args
        self.words = split_arguments(args)
        self.cwd = cwd
        self.run_command = run_command
        self.check_mention = check_mention
        self.attachments: dict[str, str] = {}

    def expand(self) -> str:
        out: list[str] = []
        fence: str | None = None
        for line in self.skill.body.splitlines(keepends=True):
            marker = _FENCE.match(line)
            if marker:
                fence = None if fence == marker.group(1) else fence or marker.group(1)
                out.append(self._arguments(line))
            elif fence:
                out.append(self._arguments(line))
            else:
                out.append(_TOKEN.sub(self._token, line))
        text = "".join(out).strip()
        if self.args and not self._arguments_placed():
            text = f"{text}\n\nARGUMENTS: {self.args}" if text else f"ARGUMENTS: {self.args}"
        if self.attachments:
            text += "\n\n" + "\n\n".join(self.attachments.values())
        if not text:
            raise SkillFileError(f"/{self.skill.name} expands to nothing ({self.skill.path} has no text).")
        if self.skill.folder is not None:
            text = f"{BASE_DIRECTORY}{self.skill.folder}\n\n{text}"
        return text

    def _arguments_placed(self) -> bool:
        """True when `$ARGUMENTS` is used, or `$1`…`$N` take every word given."""
        body = self.skill.body
        if "$ARGUMENTS" in body:
            return True
        used = [int(n) for n in re.findall(r"\$([1-9])", body)]
        return bool(used) and max(used) >= len(self.words)

    # ------------------------------------------------------------------ tokens

    def _token(self, match: re.Match[str]) -> str:
        if match.group("cmd") is not None:
            return self._command(match.group("cmd"))
        if match.group("span") is not None:
            return self._arguments(match.group("span"))
        if match.group("path") is not None:
            return self._mention(match.group("path"))
        return self._argument_value(match.group(0))

    def _argument_value(self, token: str, quote: bool = False) -> str:
        """The value of `$ARGUMENTS`, `$ARGUMENTS[N]`, `$1`…`$9` or `${CLAUDE_SKILL_DIR}`, shell-quoted
        for use inside a command."""
        if token == SKILL_DIR:
            folder = str(self.skill.path.parent)
            return shlex.quote(folder) if quote else folder
        if token == "$ARGUMENTS":
            return " ".join(shlex.quote(w) for w in self.words) if quote else self.args
        index = int(token[len("$ARGUMENTS[") : -1]) if token.startswith("$ARGUMENTS[") else int(token[1:]) - 1
        word = self.words[index] if index < len(self.words) else ""
        return shlex.quote(word) if quote and word else word

    def _arguments(self, text: str, quote: bool = False) -> str:
        return _VALUES.sub(lambda m: self._argument_value(m.group(0), quote), text)

    def _command(self, template: str) -> str:
        command = self._arguments(template, quote=True).strip()
        if not command:
            return ""
        return self.run_command(command).rstrip("\n")

    def _mention(self, raw: str) -> str:
        stripped = raw.rstrip(_TRAILING)
        trailing = raw[len(stripped) :]
        mention = self._arguments(stripped)
        if not mention:
            return trailing
        path = mention_path(mention, self.cwd)
        instead = self.check_mention(mention, path, _ARGS.search(stripped) is not None)
        if instead is not None:
            return f"{instead}{trailing}"
        if not path.exists():
            if looks_like_path(mention):
                return f"@{mention} [agentcli: {mention} does not exist, so nothing was attached]{trailing}"
            return f"@{mention}{trailing}"
        if mention not in self.attachments:
            self.attachments[mention] = _folder(mention, path) if path.is_dir() else _file(mention, path, self.skill)
        return f"{mention}{trailing}"


def _file(mention: str, path: Path, skill: Skill) -> str:
    try:
        data = read_regular_file(path, MAX_ATTACHMENT_BYTES)  # a FIFO is refused, not waited on
    except OSError as error:
        raise SkillFileError(f"/{skill.name}: cannot read @{mention}: {error.strerror}.") from None
    if b"\0" in data[:8192]:
        raise SkillFileError(f"/{skill.name}: @{mention} is a binary file; only text can be attached.")
    text = cap_middle(data.decode("utf-8", errors="replace"), MAX_ATTACHMENT_CHARS)
    return f'<file path="{mention}">\n{text.rstrip()}\n</file>'


def _folder(mention: str, path: Path) -> str:
    entries = sorted(path.iterdir(), key=lambda p: p.name)
    names = [f"{p.name}/" if p.is_dir() else p.name for p in entries if p.name != ".git"]
    if len(names) > MAX_LISTING_ENTRIES:
        more = len(names) - MAX_LISTING_ENTRIES
        names = [*names[:MAX_LISTING_ENTRIES], f"... and {more} more"]
    listing = "\n".join(names) or "(empty folder)"
    return f'<folder path="{mention}">\n{listing}\n</folder>'

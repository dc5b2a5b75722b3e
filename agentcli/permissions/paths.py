"""Path patterns for Read/Edit/Write rules, and where a path really is.

Specifiers are gitignore-style patterns (matched with pathspec) anchored at a base folder:

- `//abs/path`  → from the filesystem root
- `~/notes/**`  → from the home directory
- `./src/**`, `/src/**` → from the project root, anchored
- `src/**`, `*.env` → from the project root, gitignore rules (no slash: at any depth)

Paths are judged after resolving `..` and symlinks, so a link inside the project that
points outside is outside.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Anchor = Literal["project", "root", "home"]

_GLOB_SPECIAL = set("*?[]\\")


class PathRuleError(ValueError):
    """A path specifier that cannot be understood."""


@dataclass(frozen=True)
class PathPattern:
    text: str
    """As written in the rule."""
    anchor: Anchor
    pattern: str
    """The gitignore-style line, relative to the anchor folder."""

    def base(self, project: Path) -> Path:
        if self.anchor == "root":
            return Path("/")
        if self.anchor == "home":
            return Path.home().resolve()
        return project.resolve()

    def matches(self, path: Path, project: Path) -> bool:
        """Whether `path` (absolute, already in the form to judge) falls under this pattern."""
        base = self.base(project)
        if path == base:
            return self.pattern in ("**", "/**")
        try:
            rel = path.relative_to(base).as_posix()
        except ValueError:
            return False
        if path.is_dir():
            rel += "/"
        return bool(_spec(self.pattern).match_file(rel))


@functools.lru_cache(maxsize=512)
def _spec(pattern: str) -> Any:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


def parse_path_pattern(spec: str) -> PathPattern:
    text = spec.strip()
    if not text:
        raise PathRuleError("empty path pattern")
    anchor: Anchor = "project"
    if text.startswith("//"):
        anchor, pattern = "root", "/" + text.lstrip("/")
    elif text in ("~", "~/"):
        anchor, pattern = "home", "**"
    elif text.startswith("~/"):
        anchor, pattern = "home", "/" + text[2:]
    elif text.startswith("~"):
        raise PathRuleError("only ~/ (your own home) is supported, not ~user")
    elif text in (".", "./"):
        pattern = "**"
    elif text.startswith("./"):
        pattern = "/" + text[2:]
    else:
        pattern = text
    if pattern.startswith("!"):
        raise PathRuleError("negated patterns (!) are not supported; use a deny rule instead")
    if ".." in Path(pattern).parts:
        raise PathRuleError("patterns cannot climb out with '..'; write an absolute //path instead")
    if pattern == "/":
        pattern = "**"
    try:
        _spec(pattern)
    except Exception as error:  # pathspec reports bad patterns with several exception types
        raise PathRuleError(f"not a valid gitignore-style pattern: {error}") from None
    return PathPattern(text, anchor, pattern)


def real_path(path: Path) -> Path:
    """`path` with `..` and every symlink resolved (the file the tool will really touch)."""
    return path.resolve()


def within(real: Path, root: Path) -> bool:
    """Whether the resolved path `real` is `root` (also resolved) or lies below it. No I/O."""
    return real == root or root in real.parents


def is_inside(path: Path, project: Path) -> bool:
    """Whether `path`, after resolving `..` and symlinks, lies in the project directory."""
    return within(real_path(path), project.resolve())


def escape_pattern(rel: str) -> str:
    """A literal path as a gitignore pattern (special characters backslash-escaped)."""
    escaped = "".join("\\" + c if c in _GLOB_SPECIAL else c for c in rel)
    kept = escaped.rstrip(" ")
    return kept + "\\ " * (len(escaped) - len(kept))  # gitignore drops unescaped trailing spaces

"""Glob patterns: one compiler for .gitignore lines, Grep's `glob` filter and the Glob tool.

Semantics follow git (and ripgrep, which uses the same rules): `*` and `?` never cross
`/`; `**/` matches any number of folders; `{a,b}` alternates; a pattern without a slash
matches a name at any depth, one with a slash is anchored to its base folder. A pattern
matches a path itself, never "everything inside a matched folder" (callers prune folders).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GLOB_CHARS = frozenset("*?[{")


def expand_braces(pattern: str) -> list[str]:
    """`*.{ts,tsx}` → [`*.ts`, `*.tsx`]; nested and repeated braces expand too."""
    depth, start = 0, -1
    for i, char in enumerate(pattern):
        if char == "\\":
            continue
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                head, body, tail = pattern[:start], pattern[start + 1 : i], pattern[i + 1 :]
                return [head + alt + rest for alt in _split_top(body) for rest in expand_braces(tail)]
    return [pattern]


def _split_top(body: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in body:
        depth += char == "{"
        depth -= char == "}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [expanded for part in parts for expanded in expand_braces(part)]


def glob_regex(glob: str) -> str:
    """A regex (for `fullmatch`) for one brace-free glob over `/`-separated relative paths."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        if char == "*" and glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/"):
            end = i + 2
            if end == n:
                out.append(".*")
                i = end
                continue
            if glob[end] == "/":
                out.append("(?:.*/)?")
                i = end + 1
                continue
        if char == "*":
            while i + 1 < n and glob[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            cls, i = _char_class(glob, i)
            out.append(cls)
            continue
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _char_class(glob: str, start: int) -> tuple[str, int]:
    """Translate `[...]` at `start`; an unclosed `[` is a literal."""
    i = start + 1
    negate = i < len(glob) and glob[i] in "!^"
    if negate:
        i += 1
    first = i
    while i < len(glob) and (glob[i] != "]" or i == first):
        i += 1
    if i >= len(glob):
        return re.escape("["), start + 1
    body = "".join("\\" + c if c in "\\^[]&~|" else c for c in glob[first:i])
    return ("[^/" if negate else "[") + body + "]", i + 1


@dataclass(frozen=True)
class GitPattern:
    """One gitignore-style pattern, compiled."""

    regex: re.Pattern[str]
    negated: bool
    dir_only: bool

    @staticmethod
    def parse(line: str) -> list[GitPattern]:
        """Compile one .gitignore line or glob (braces expand to several); [] for blanks/comments."""
        if not line.strip() or line.startswith("#"):
            return []
        negated = line.startswith("!")
        if negated or line.startswith("\\!") or line.startswith("\\#"):
            line = line[1:]
        line = _strip_trailing_spaces(line)
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            return []
        anchored = "/" in line
        line = line.removeprefix("/")
        patterns = []
        for alternative in expand_braces(line):
            prefix = "" if anchored or alternative.startswith("**/") else "(?:.*/)?"
            patterns.append(GitPattern(re.compile(prefix + glob_regex(alternative)), negated, dir_only))
        return patterns


def _strip_trailing_spaces(line: str) -> str:
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        return stripped[:-1] + " "
    return stripped


class GitPatternList:
    """Ordered patterns where the last match wins (a `!` pattern re-includes)."""

    def __init__(self, lines: list[str]) -> None:
        self.patterns = [pattern for line in lines for pattern in GitPattern.parse(line)]
        self.has_negation = any(p.negated for p in self.patterns)
        self.has_positive = any(not p.negated for p in self.patterns)
        any_file = [p.regex.pattern for p in self.patterns if not p.dir_only]
        any_dir = [p.regex.pattern for p in self.patterns]
        self._any_file = re.compile("|".join(f"(?:{r})" for r in any_file)) if any_file else None
        self._any_dir = re.compile("|".join(f"(?:{r})" for r in any_dir)) if any_dir else None

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: matched (ignored/selected); False: re-included by a `!` pattern; None: no match."""
        quick = self._any_dir if is_dir else self._any_file
        if quick is None or not quick.fullmatch(rel):
            return None
        if not self.has_negation:
            return True
        for pattern in reversed(self.patterns):
            if (is_dir or not pattern.dir_only) and pattern.regex.fullmatch(rel):
                return not pattern.negated
        return None


class PathFilter:
    """Grep's `glob` filter with ripgrep `--glob` semantics.

    A file must match a positive pattern (when there is one); a `!pattern` excludes files
    and, when it matches a folder, the whole folder. Paths are relative to the search root.
    """

    def __init__(self, glob: str) -> None:
        self.patterns = GitPatternList([glob])

    def excludes_dir(self, rel: str) -> bool:
        return self.patterns.match(rel, True) is False

    def accepts_file(self, rel: str) -> bool:
        matched = self.patterns.match(rel, False)
        if matched is None:
            return not self.patterns.has_positive
        return matched


class AnchoredGlob:
    """The Glob tool's pattern: standard glob over the whole relative path (`*.py` = top level)."""

    def __init__(self, pattern: str) -> None:
        alternatives = expand_braces(pattern)
        self.regex = re.compile("|".join(f"(?:{glob_regex(alt)})" for alt in alternatives))
        self.max_depth = None if "**" in pattern else max(alt.count("/") for alt in alternatives) + 1

    def matches(self, rel: str) -> bool:
        return self.regex.fullmatch(rel) is not None


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split `src/app/**/*.ts` into (`src/app`, `**/*.ts`): folders to walk straight into."""
    parts = pattern.split("/")
    fixed: list[str] = []
    while len(parts) > 1 and not (_GLOB_CHARS & set(parts[0])) and "\\" not in parts[0]:
        fixed.append(parts.pop(0))
    return "/".join(fixed), "/".join(parts)


# ripgrep's names (and common aliases) for `type`; a type matches file names only.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi", "*.pyw"),
    "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"),
    "ts": ("*.ts", "*.tsx", "*.mts", "*.cts"),
    "go": ("*.go",),
    "rust": ("*.rs",),
    "java": ("*.java", "*.jsp"),
    "kotlin": ("*.kt", "*.kts"),
    "scala": ("*.scala", "*.sbt"),
    "swift": ("*.swift",),
    "c": ("*.c", "*.h", "*.H"),
    "cpp": ("*.cpp", "*.cc", "*.cxx", "*.c++", "*.hpp", "*.hh", "*.hxx", "*.h++", "*.inl", "*.h"),
    "cs": ("*.cs", "*.csx"),
    "ruby": ("*.rb", "*.rake", "*.gemspec", "Gemfile", "Rakefile"),
    "php": ("*.php", "*.phtml"),
    "lua": ("*.lua",),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc", ".profile"),
    "sql": ("*.sql",),
    "html": ("*.html", "*.htm", "*.xhtml"),
    "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "md": ("*.md", "*.markdown", "*.mdx"),
    "json": ("*.json", "*.jsonl"),
    "yaml": ("*.yaml", "*.yml"),
    "toml": ("*.toml", "Cargo.lock"),
    "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"),
    "txt": ("*.txt",),
    "make": ("Makefile", "makefile", "GNUmakefile", "*.mk", "*.mak"),
    "docker": ("Dockerfile", "*.dockerfile", "Dockerfile.*"),
    "proto": ("*.proto",),
    "elixir": ("*.ex", "*.exs"),
    "haskell": ("*.hs", "*.lhs"),
    "dart": ("*.dart",),
    "zig": ("*.zig",),
}
TYPE_ALIASES = {
    "python": "py",
    "javascript": "js",
    "typescript": "ts",
    "rs": "rust",
    "golang": "go",
    "rb": "ruby",
    "c++": "cpp",
    "csharp": "cs",
    "kt": "kotlin",
    "markdown": "md",
    "yml": "yaml",
    "shell": "sh",
    "bash": "sh",
    "text": "txt",
}


def type_globs(name: str) -> tuple[str, ...] | None:
    """File-name globs for a language type such as `py`, or None if unknown."""
    key = name.lower()
    return FILE_TYPES.get(TYPE_ALIASES.get(key, key))


class NameGlobs:
    """Matches a file's base name against globs (for `type`)."""

    def __init__(self, globs: tuple[str, ...]) -> None:
        self.regex = re.compile("|".join(f"(?:{glob_regex(g)})" for g in globs))

    def matches(self, name: str) -> bool:
        return self.regex.fullmatch(name) is not None

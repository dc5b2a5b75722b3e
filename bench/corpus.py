"""A corpus of real Claude Code files (commands, agents, skills) from public collections.

    .venv/bin/python bench/corpus.py [--mirror DIR] [--out DIR]

Fetches each source below at its pinned commit and extracts the files it names into
`bench/.corpus/<owner>+<name>/` (git-ignored: the files stay their authors', never committed),
with `bench/.corpus/MANIFEST.json` listing every file with its kind and where it came from.
`bench/corpus_check.py` then loads each one with agentcli's loaders.

By default each repository is cloned from GitHub (blobs fetched lazily) into
`bench/.corpus/.git/`; `--mirror DIR` reads local git directories instead, `DIR/<owner>+<name>/repo`
(or `DIR/<owner>+<name>.git`), which must hold the pinned commit. A skill is extracted with its
whole folder (its supporting files are part of it); a command or an agent is one file.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / ".corpus"
KINDS = ("command", "agent", "skill")


@dataclass(frozen=True)
class Pattern:
    kind: str
    """`command`, `agent` or `skill` (a skill pattern matches its SKILL.md)."""
    glob: str
    """`*` matches within one path segment, `**` any number of them."""
    base: str
    """The part of a match that is the collection's commands or agents folder: what a user copies
    into `.claude/commands/` or `.claude/agents/` keeps the path below it (a regex group `base`)."""


@dataclass(frozen=True)
class Source:
    repo: str
    commit: str
    patterns: tuple[Pattern, ...]
    exclude: tuple[str, ...] = ()
    """Globs of files that match a pattern but are not Claude Code files (READMEs, templates)."""


def commands(glob: str, base: str) -> Pattern:
    return Pattern("command", glob, base)


def agents(glob: str, base: str) -> Pattern:
    return Pattern("agent", glob, base)


def skills(glob: str) -> Pattern:
    return Pattern("skill", glob, "")


README = ("**/README.md", "**/readme.md", "**/CHANGELOG.md", "**/LICENSE.md", "**/CONTRIBUTING.md")

SOURCES = (
    Source("anthropics/skills", "9d2f1ae187231d8199c64b5b762e1bdf2244733d", (skills("skills/*/SKILL.md"),)),
    Source(
        "anthropics/claude-code",
        "5cfc0a1905ce0c0a9bd81d8a90fe6b62ff614357",
        (
            commands(".claude/commands/**.md", ".claude/commands"),
            commands("plugins/*/commands/**.md", "plugins/*/commands"),
            agents("plugins/*/agents/**.md", "plugins/*/agents"),
            skills("plugins/*/skills/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "anthropics/claude-plugins-official",
        "340e33aef211d95769d252324854497af871dafe",
        (
            commands("plugins/*/commands/**.md", "plugins/*/commands"),
            commands("external_plugins/*/commands/**.md", "external_plugins/*/commands"),
            agents("plugins/*/agents/**.md", "plugins/*/agents"),
            skills("plugins/*/skills/*/SKILL.md"),
            skills("external_plugins/*/skills/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "wshobson/agents",
        "367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35",
        (
            commands("plugins/*/commands/**.md", "plugins/*/commands"),
            agents("plugins/*/agents/**.md", "plugins/*/agents"),
            skills("plugins/*/skills/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "wshobson/commands",
        "7a9fe3f30158e9b9289566b636da3cf4dbd33446",
        (commands("tools/*.md", ""), commands("workflows/*.md", "")),
        README,
    ),
    Source(
        "VoltAgent/awesome-claude-code-subagents",
        "c9e51ec0b3d43f5dcdd0b558a6cd28ba6ada97c1",
        (agents("categories/**.md", "categories"),),
        README,
    ),
    Source(
        "lst97/claude-code-sub-agents",
        "96f5a506793d1c2e4a66c3ec3ce63c2cd2667728",
        (agents("agents/**.md", "agents"),),
        README,
    ),
    Source(
        "0xfurai/claude-code-subagents",
        "3f0399d33498ef1c0ec2326eae0dbed567fc9c22",
        (agents("agents/*.md", "agents"),),
        README,
    ),
    Source(
        "contains-studio/agents",
        "a5a480c324cac64b9c569bca0b2f297d517240cb",
        (agents("*/*.md", ""),),
        README,
    ),
    Source(
        "qdhenry/Claude-Command-Suite",
        "5fb80f3a1686d90ec45c88b8b06b03706b0f0a95",
        (
            commands(".claude/commands/**.md", ".claude/commands"),
            agents(".claude/agents/**.md", ".claude/agents"),
        ),
        README,
    ),
    Source(
        "feiskyer/claude-code-settings",
        "535ca628f79a78aabdd8b0fdf68a6bda378ad32d",
        (commands("commands/**.md", "commands"),),
        README,
    ),
    Source(
        "davila7/claude-code-templates",
        "c2b584d4b8493e98a885b1b9aabb0736bccfe7cf",
        (
            commands("cli-tool/components/commands/**.md", "cli-tool/components/commands/*"),
            agents("cli-tool/components/agents/**.md", "cli-tool/components/agents/*"),
            skills("cli-tool/components/skills/*/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "obra/superpowers",
        "44c9b2d6e889982ac18c27d05a19fefe335194e1",
        (
            commands("commands/**.md", "commands"),
            agents("agents/**.md", "agents"),
            skills("skills/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "trailofbits/skills",
        "293fb74c3151cceda32a85a545fe8acd67f8f5c6",
        (
            commands("plugins/*/commands/**.md", "plugins/*/commands"),
            agents("plugins/*/agents/**.md", "plugins/*/agents"),
            skills("plugins/*/skills/*/SKILL.md"),
        ),
        README,
    ),
    Source(
        "ComposioHQ/awesome-claude-skills",
        "f2b5e29bc315f04c8e09591ba275f4c4f7d4b8fe",
        (skills("*/SKILL.md"), skills("*/*/SKILL.md")),
    ),
    Source(
        "K-Dense-AI/claude-scientific-skills",
        "899a51bfbd63218153b272c9459dcb4a7ae88da6",
        (skills("scientific-skills/*/SKILL.md"),),
    ),
)


def glob_regex(glob: str) -> re.Pattern[str]:
    """`plugins/*/commands/**.md` as a regex over a POSIX path."""
    out = ""
    index = 0
    while index < len(glob):
        if glob.startswith("**", index):
            out += ".*"
            index += 2
        elif glob[index] == "*":
            out += "[^/]*"
            index += 1
        else:
            out += re.escape(glob[index])
            index += 1
    return re.compile(out)


def matches(glob: str, path: str) -> bool:
    return glob_regex(glob).fullmatch(path) is not None


@dataclass(frozen=True)
class Entry:
    kind: str
    source: str
    path: str
    """In the repository."""
    relative: str
    """Below the collection's commands or agents folder (`sub/x.md`); a skill's folder name."""

    def as_json(self) -> dict[str, str]:
        return {"kind": self.kind, "source": self.source, "path": self.path, "relative": self.relative}


def select(source: Source, names: list[str]) -> list[Entry]:
    """The Claude Code files of `source` among the repository's file `names`."""
    found: dict[str, Entry] = {}
    for name in names:
        if any(matches(glob, name) for glob in source.exclude):
            continue
        for pattern in source.patterns:
            if name in found or not matches(pattern.glob, name):
                continue
            if pattern.kind == "skill":
                relative = PurePosixPath(name).parent.name
            else:
                base = glob_regex(pattern.base + "/") if pattern.base else None
                prefix = base.match(name) if base else None
                relative = name[prefix.end() :] if prefix else name
            found[name] = Entry(pattern.kind, source.repo, name, relative)
    return sorted(found.values(), key=lambda e: (e.kind, e.path))


def git_dir(source: Source, mirror: Path | None, cache: Path) -> Path:
    """A git directory holding `source.commit`: a mirror's, or a clone made (once) in `cache`."""
    slug = source.repo.replace("/", "+")
    if mirror is not None:
        for candidate in (mirror / slug / "repo", mirror / f"{slug}.git", mirror / slug):
            if candidate.is_dir():
                return candidate
        raise SystemExit(f"corpus: no git directory for {source.repo} under {mirror}")
    target = cache / f"{slug}.git"
    if not target.is_dir():
        url = f"https://github.com/{source.repo}.git"
        subprocess.run(["git", "clone", "--bare", "--filter=blob:none", "-q", url, str(target)], check=True)
    has = subprocess.run(["git", "--git-dir", str(target), "cat-file", "-e", f"{source.commit}^{{commit}}"])
    if has.returncode != 0:
        subprocess.run(["git", "--git-dir", str(target), "fetch", "-q", "origin", source.commit], check=True)
    return target


def extract(source: Source, repo: Path, out: Path) -> list[Entry]:
    """Write the Claude Code files of `source` (skills with their folders) below `out`.

    Blobs are read one by one (`git cat-file --batch`), so a file the copy lacks (a large
    binary left out of a mirror) is skipped rather than failing the whole source."""
    tree = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", source.commit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    blobs = {}
    for line in tree:
        meta, name = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and mode != "120000":  # no symlinks: a corpus file is a regular file
            blobs[name] = sha
    entries = select(source, sorted(blobs))
    folders = {str(PurePosixPath(e.path).parent) + "/" for e in entries if e.kind == "skill"}
    wanted = {e.path for e in entries}
    wanted.update(name for name in blobs if any(name.startswith(folder) for folder in folders))
    target = out / source.repo.replace("/", "+")
    shutil.rmtree(target, ignore_errors=True)
    names = sorted(wanted)
    batch = subprocess.run(
        ["git", "--git-dir", str(repo), "cat-file", "--batch"],
        input="".join(f"{blobs[name]}\n" for name in names).encode(),
        check=True,
        capture_output=True,
    ).stdout
    stream = io.BytesIO(batch)
    for name in names:
        header = stream.readline().split()
        if len(header) < 3 or header[1] != b"blob":  # `<sha> missing`
            continue
        data = stream.read(int(header[2]))
        stream.read(1)  # the newline after each object
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return [e for e in entries if (target / e.path).is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, help="local git directories, DIR/<owner>+<name>/repo")
    parser.add_argument("--out", type=Path, default=CORPUS)
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, str]] = []
    for source in SOURCES:
        repo = git_dir(source, args.mirror, out / ".git")
        entries = extract(source, repo, out)
        counts = {kind: sum(e.kind == kind for e in entries) for kind in KINDS}
        print(f"{source.repo}@{source.commit[:12]}: " + ", ".join(f"{n} {k}s" for k, n in counts.items() if n))
        manifest.extend(e.as_json() for e in entries)
    sources = [{"repo": s.repo, "commit": s.commit} for s in SOURCES]
    (out / "MANIFEST.json").write_text(json.dumps({"sources": sources, "files": manifest}, indent=1) + "\n")
    totals = {kind: sum(item["kind"] == kind for item in manifest) for kind in KINDS}
    print(f"{len(manifest)} files: " + ", ".join(f"{n} {k}s" for k, n in totals.items()) + f" in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

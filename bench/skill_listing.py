"""The cost of installed skills in the first request: what the skills listing adds for 100 skills.

    .venv/bin/python bench/skill_listing.py [--skills N] [--synthetic]

Runs the installed `agentcli run "hi"` against the fake Anthropic server, once with no skills and
once with N skill folders in `~/.claude/skills/` (the first N skills of the corpus fetched by
bench/corpus.py, or, without it or with `--synthetic`, generated ones whose descriptions have the
corpus's median length, 180 characters), and reports the skills reminder's size, how many skills
it describes and how many it only names, and the first request's tokens (≈ chars/4, counted as
bench/cache_hits.py does).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cache_hits import first_request_size, run_cli  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, reply, text  # noqa: E402

CORPUS = ROOT / "bench" / ".corpus"
LISTING_HEAD = "Skills and commands of the user and the project."
MEDIAN_DESCRIPTION = 180


def corpus_skills(count: int) -> list[Path]:
    """The folders of the first `count` skills of the corpus (distinct names), if it was fetched."""
    manifest = CORPUS / "MANIFEST.json"
    if not manifest.exists():
        return []
    found: dict[str, Path] = {}
    for entry in json.loads(manifest.read_text())["files"]:
        if entry["kind"] == "skill" and entry["relative"] not in found:
            found[entry["relative"]] = (CORPUS / entry["source"].replace("/", "+") / entry["path"]).parent
    return list(found.values())[:count]


def install(skills_dir: Path, count: int, synthetic: bool) -> str:
    """Put `count` skills in `skills_dir`; says where they came from."""
    real = [] if synthetic else corpus_skills(count)
    if len(real) == count:
        for folder in real:
            target = skills_dir / folder.name
            target.mkdir(parents=True)
            (target / "SKILL.md").write_bytes((folder / "SKILL.md").read_bytes())
        return "the corpus's first skills"
    for n in range(count):
        words = f"Handles task family {n}: what it does, then when to use it, as skill authors write. "
        description = (words * 4)[:MEDIAN_DESCRIPTION]
        target = skills_dir / f"skill-{n:03}"
        target.mkdir(parents=True)
        (target / "SKILL.md").write_text(f"---\nname: skill-{n:03}\ndescription: {description}\n---\nBody {n}.\n")
    return f"generated skills ({MEDIAN_DESCRIPTION}-character descriptions)"


def first_request(tmp: Path, count: int, synthetic: bool) -> tuple[dict[str, int], str, str]:
    home, project = tmp / "home", tmp / "project"
    project.mkdir(parents=True)
    (home / ".agentcli").mkdir(parents=True)
    origin = install(home / ".claude" / "skills", count, synthetic) if count else "none"
    with FakeAnthropic() as api:
        api.script(reply(text("Hello.")))
        run_cli(api, project, home, "hi")
        body = api.requests[0].body
    blocks = [b.get("text", "") for m in body["messages"] for b in m["content"] if isinstance(b, dict)]
    listing = next((b for b in blocks if LISTING_HEAD in b), "")
    return first_request_size(body), listing, origin


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--synthetic", action="store_true", help="generated skills even if the corpus is there")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bare, _, _ = first_request(Path(tmp) / "none", 0, args.synthetic)
        full, listing, origin = first_request(Path(tmp) / "many", args.skills, args.synthetic)
    described = sum(line.startswith("- /") for line in listing.splitlines())
    print(f"First request for 'hi' with {args.skills} skills in ~/.claude/skills ({origin}); tokens ≈ chars/4:")
    print(f"  skills reminder: {len(listing):,} chars ≈ {len(listing) // 4:,} tokens")
    print(f"  described: {described}, named only: {args.skills - described}")
    print(f"  first request: {bare['total']:,} tokens without skills, {full['total']:,} with them")
    print(f"  per installed skill: {(full['total'] - bare['total']) / args.skills:.1f} tokens")


if __name__ == "__main__":
    main()

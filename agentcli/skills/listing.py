"""The skills list the model sees: names and descriptions only, within a size that is bounded.

Progressive disclosure: a skill's body reaches the model only when it is run; until then the
model sees one line per skill, `- /name [hint]: description` (the description clipped to
`MAX_DESCRIPTION` characters), project skills first, then the user's, each by name. Lines go in
until `DESCRIBED_BUDGET` characters are used (about 2,000 tokens, Claude Code's budget of 1% of
a 200k context): with descriptions of a typical length (~200 characters) that is 30-40 skills.
The skills past it are listed by name only, up to `NAMES_BUDGET` characters (about 200 more
names); any beyond are counted, and a Skill call naming one still runs it (an unknown name
gets the full list back).
"""

from __future__ import annotations

from agentcli.skills.catalog import Skill, SkillCatalog

DESCRIBED_BUDGET = 8_000
"""Characters for the described lines (about 2,000 tokens)."""
NAMES_BUDGET = 4_000
"""Characters for the names of the skills that did not fit with a description."""
MAX_DESCRIPTION = 250

HEAD = (
    "Skills and commands of the user and the project. The user runs one by typing /name; when the user "
    "asks in plain words for what one does, or a task matches its description, run it with the Skill "
    "tool: only its name and description are shown here, and running it returns its full instructions."
)


def render_skill_list(catalog: SkillCatalog, budget: int = DESCRIBED_BUDGET, names_budget: int = NAMES_BUDGET) -> str:
    """The body of the skills <system-reminder>; "" when no skill is offered to the model."""
    skills = sorted(
        catalog.model_invocable(), key=lambda s: (not s.source.startswith("project"), catalog.shown_name(s))
    )
    if not skills:
        return ""
    described: list[str] = []
    undescribed: list[str] = []
    used = 0
    for skill in skills:
        line = _line(catalog.shown_name(skill), skill)
        if used + len(line) + 1 <= budget:
            described.append(line)
            used += len(line) + 1
        else:
            undescribed.append(f"/{catalog.shown_name(skill)}")
    text = HEAD + "\n" + "\n".join(described)
    if undescribed:
        shown, used = [], 0
        for name in undescribed:
            if used + len(name) + 2 > names_budget:
                break
            shown.append(name)
            used += len(name) + 2
        more = len(undescribed) - len(shown)
        tail = f" and {more} more" if more else ""
        text += (
            f"\n({len(undescribed)} more not described, to keep this list short: {', '.join(shown)}{tail}. "
            "Run one to see what it does.)"
        )
    return text


def _line(name: str, skill: Skill) -> str:
    hint = f" {skill.argument_hint}" if skill.argument_hint else ""
    return f"- /{name}{hint}: {_clip(skill.description or '(no description)')}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"

"""The skills list the model sees, within a size budget that says what it left out."""

from __future__ import annotations

from agentcli.skills.loader import SkillCatalog

SKILL_LIST_BUDGET = 2_000
"""Characters for the list lines (about 500 tokens)."""
MAX_DESCRIPTION = 150
MAX_NAMES_LEFT_OUT = 20


def render_skill_list(catalog: SkillCatalog, budget: int = SKILL_LIST_BUDGET) -> str:
    """The body of the skills <system-reminder>; "" when no skill is offered to the model."""
    skills = catalog.model_invocable()
    if not skills:
        return ""
    lines: list[str] = []
    left_out: list[str] = []
    used = 0
    for skill in skills:
        hint = f" {skill.argument_hint}" if skill.argument_hint else ""
        line = f"- /{skill.name}{hint}: {_clip(skill.description or '(no description)')}"
        if used + len(line) + 1 > budget:
            left_out.append(f"/{skill.name}")
            continue
        lines.append(line)
        used += len(line) + 1
    head = (
        "Skills (slash commands) defined by the user and the project. The user runs them by typing "
        "/name; when the user asks in plain words for what one does, run it with the Skill tool."
    )
    text = head + "\n" + "\n".join(lines)
    if left_out:
        names = ", ".join(left_out[:MAX_NAMES_LEFT_OUT])
        more = len(left_out) - MAX_NAMES_LEFT_OUT
        tail = f" and {more} more" if more > 0 else ""
        text += f"\n({len(left_out)} more not described, to keep this list short: {names}{tail}.)"
    return text


def _clip(text: str) -> str:
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"

"""Agent types: what `Task(subagent_type=...)` may start, and where each was defined.

`load_agent_types(cwd, notice)` returns the types in force for a project. For now these are
the two built-ins; definition files are added here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BUILT_IN = "built-in"


@dataclass(frozen=True)
class AgentType:
    name: str
    description: str
    tools: tuple[str, ...] | None
    """The tools it may use; None: all of its parent's but Task."""
    model: str | None
    """None: the parent's model."""
    source: str
    """`built-in`, or the path of the file that defines it."""


BUILT_INS = (
    AgentType(
        "general-purpose",
        "For research and multi-step tasks: searches, reads and changes code with all the tools.",
        None,
        None,
        BUILT_IN,
    ),
    AgentType(
        "Explore",
        "Fast read-only search of the codebase: finds files and code and reports paths and line numbers.",
        ("Read", "Grep", "Glob"),
        None,
        BUILT_IN,
    ),
)


def load_agent_types(cwd: Path, notice: Callable[[str], None]) -> list[AgentType]:
    """The agent types for the project at `cwd`; `notice` hears about definitions that were skipped."""
    return list(BUILT_INS)

"""Rewinding: what each user turn changed, and putting a session's files back as they were before one.

Both front ends use this: the REPL's `/rewind` (`repl.rewind`) and `agentcli rewind`
(`cli.rewind`). A code rewind is planned, then done:

- `plan_code` finds the checkpoint (the first recorded at or after the turn asked for: a turn
  that changed nothing has none, and the tree before it is the one before the next turn that
  did), records the work tree as it is now and lists the files changed outside agentcli since
  that checkpoint (between one step's `after` and the next one's `before`, and since the last);
- the caller shows those and asks (the REPL) or needs `--force` (a script);
- `do_code` restores (`restore.restore`), then records the tree again and reports every path
  that still differs from the checkpoint. The tree it replaced is kept as the rewind's own
  step (`store` module), so `undo_plan` can put it back: a rewind can be undone.

If the work tree changed between the plan and the rewind, nothing is restored (CheckpointError):
the user confirmed a list that is no longer true.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from agentcli.checkpoints.restore import Restored, restore
from agentcli.checkpoints.shadow import CheckpointError
from agentcli.checkpoints.store import CheckpointStore, Step, step_name
from agentcli.contracts import JSON
from agentcli.sessions.store import TurnRecord
from agentcli.sessions.transcript import now

NOT_COVERED = (
    "Checkpoints cover the project's files that git would add: not ignored files, files over the "
    "size limit, other repositories inside the project, files outside the project, databases or "
    "anything a command did elsewhere (a push, a deploy, a message sent)."
)


@dataclass(frozen=True)
class TurnSummary:
    """One user turn as a rewind list shows it."""

    number: int
    prompt: str
    time: str
    files: list[str] | None
    """The files it changed; None when it recorded no checkpoint (it changed nothing, or checkpoints were off)."""

    def as_json(self) -> JSON:
        return {"turn": self.number, "prompt": self.prompt, "time": self.time, "files": self.files}


@dataclass(frozen=True)
class CodePlan:
    """A code rewind about to be done."""

    session_id: str
    target: Step
    """The step whose `before` is restored."""
    now: str
    """The work tree as recorded when planned."""
    changes: list[str]
    """The files the rewind would change."""
    outside: list[str]
    """Files changed outside agentcli since that checkpoint: shown before restoring."""
    after_turn: int
    """The last turn recorded: the rewind becomes a step after it."""


def summaries(store: CheckpointStore | None, session_id: str, turns: Sequence[TurnRecord]) -> list[TurnSummary]:
    """The conversation's turns (`turns`, from its transcript) with the files each changed, oldest first."""
    steps = {step.turn: step for step in store.steps(session_id) if step.rewind == 0} if store else {}
    found = []
    for turn in turns:
        step = steps.get(turn.number)
        files = None
        if step is not None and store is not None and step.before is not None:
            end = step.after or step.before
            files = store.repo.changed_names(step.before, end)
        found.append(TurnSummary(turn.number, turn.prompt, turn.time, files))
    return found


def plan_code(store: CheckpointStore, session_id: str, turn: int) -> CodePlan | None:
    """The rewind of the files to before user turn `turn`; None when no turn since changed anything."""
    with store.repo.locked():
        steps = store.steps(session_id)
        target = next((s for s in steps if s.rewind == 0 and s.turn >= turn and s.before), None)
        return None if target is None else _plan(store, session_id, steps, target)


def undo_plan(store: CheckpointStore, session_id: str) -> CodePlan | None:
    """The rewind that puts back the files as they were before the session's last code rewind;
    None if there was none."""
    with store.repo.locked():
        steps = store.steps(session_id)
        target = next((s for s in reversed(steps) if s.rewind and s.before), None)
        return None if target is None else _plan(store, session_id, steps, target)


def _plan(store: CheckpointStore, session_id: str, steps: list[Step], target: Step) -> CodePlan:
    assert target.before is not None
    current = store.repo.snapshot().commit
    later = [s for s in steps if (s.turn, s.rewind) >= (target.turn, target.rewind)]
    outside: set[str] = set()
    for step, following in itertools.pairwise(later):
        if step.after and following.before:
            outside.update(store.repo.changed_names(step.after, following.before))
    if later[-1].after:
        outside.update(store.repo.changed_names(later[-1].after, current))
    changes = store.repo.changed_names(current, target.before)
    return CodePlan(session_id, target, current, changes, sorted(outside), max(s.turn for s in steps))


def do_code(store: CheckpointStore, plan: CodePlan) -> Restored:
    """Restore the files `plan` planned; CheckpointError when the tree changed since it was planned."""
    assert plan.target.before is not None
    with store.repo.locked():
        current = store.repo.snapshot().commit
        if current != plan.now:
            changed = ", ".join(store.repo.changed_names(plan.now, current)[:10])
            raise CheckpointError(f"files changed since the rewind was planned ({changed}); nothing was restored")
        steps = store.steps(plan.session_id)
        rewinds = [s.rewind for s in steps if s.turn == plan.after_turn]
        name = step_name(plan.after_turn, max(rewinds, default=0) + 1)
        store.repo.set_refs({store.ref(plan.session_id, name, "before"): current})
        restored = restore(store.repo, current, plan.target.before)
        check = store.record(plan.session_id, name, "after")
        said = {line.split(": ", 1)[0] for line in restored.not_restored}
        for path in store.repo.changed_names(check.commit, plan.target.before):
            if path not in said:
                restored.not_restored.append(f"{path}: still differs from the checkpoint after the restore")
        return restored


def rewind_record(turn: int, *, code: bool, conversation: bool) -> JSON:
    """The transcript's `rewind` record (`sessions.transcript`)."""
    return {"type": "rewind", "time": now(), "turn": turn, "code": code, "conversation": conversation}

"""The checkpointed workspace: another workspace, with the work tree recorded before each user turn's first change.

A wrapper (`contract.Workspace`) around the session's workspace, one per conversation: every
call passes through to the workspace it wraps, and `before_change` first has the
conversation's `checkpoints.turns.TurnCheckpoints` record the work tree before the first change
of the call's user turn. Whatever tool makes the change (Write, Edit, Bash, an MCP tool that does
not say it only reads, a skill's `!` command) and whoever calls it (the conversation's agent or
a sub-agent, whose calls count as the turn that started it) is covered, because they all
announce themselves here. It never refuses a call: a checkpoint that fails is said and the call
goes on. Closing it closes nothing: the wrapped workspace belongs to the session.
"""

from __future__ import annotations

from agentcli.checkpoints.turns import TurnCheckpoints
from agentcli.workspace.contract import Change, Workspace
from agentcli.workspace.wrapper import WorkspaceWrapper


class CheckpointedWorkspace(WorkspaceWrapper):
    """`inner`, with `checkpoints` recording the work tree before each user turn's first change."""

    def __init__(self, inner: Workspace, checkpoints: TurnCheckpoints) -> None:
        super().__init__(inner)
        self._checkpoints = checkpoints

    def before_change(self, change: Change) -> None:
        self._inner.before_change(change)  # a refusal there stops the call before anything is recorded
        self._checkpoints.before(change.user_turn, change.access)

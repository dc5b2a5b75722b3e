"""The REPL's side of the `statusLine` command: what it tells the command about the session."""

from __future__ import annotations

from agentcli.session import Session
from agentcli.statusline.session_input import SessionFacts


def session_facts(session: Session, context_tokens: int) -> SessionFacts:
    """The session as it is now, for the status line command's input."""
    return SessionFacts(
        session_id=session.id,
        transcript_path=session.transcript.path,
        cwd=session.cwd,
        added_dirs=session.gate.more_folders,
        model=session.model_name,
        permission_mode=session.gate.mode,
        usage=session.usage,
        cost_usd=session.cost_usd(session.usage),
        context_tokens=context_tokens,
        context_window=session.model_info.context_window,
    )

"""A session: what the front ends talk to (`Session`), built from the command line's options
(`SessionOptions`).

- `composition`: the session's parts, built once from the settings and the options;
- `conversation`: one conversation of the session (its agent, transcript, compaction, resume);
- `session`: the `Session`, which holds the parts and its current conversation.
"""

from agentcli.session.composition import SessionOptions
from agentcli.session.session import Session

__all__ = ["Session", "SessionOptions"]

"""The Agent Client Protocol (`agentcli acp`): editors drive agentcli over stdio.

`serve_stdio` keeps stdout for the protocol alone: whatever else would be written there (a
library's print, a child process that inherited it) goes to stderr instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.session import SessionOptions


def serve_stdio(options: Callable[[], SessionOptions]) -> int:
    """Serve until stdin closes; `options` makes the command line's session options when the
    first session opens (see `agent.AcpAgent`)."""
    from agentcli.acp.agent import AcpAgent
    from agentcli.acp.connection import Connection

    sys.stdout.flush()
    protocol = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    agent = AcpAgent(options)
    agent.serve(Connection(sys.stdin.buffer, protocol, agent))
    return 0

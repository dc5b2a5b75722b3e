"""What a model request waits on before it is sent, when something beyond the session decides.

A session alone sends each request at once (its loop retries what fails, `providers.retry`).
A batch of tasks shares one server and one budget: each task's session is given an
`Admission` (`agentcli.batch.admission`), and every request goes through `admit()`, a block
that waits until the request may go (or raises: the batch's budget is spent, the batch is
stopping) and, as it ends, learns how the request went: an overloaded or rate-limited server
(a `TransientModelError` leaving the block) slows every task down, not only this one.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol


class Admission(Protocol):
    def admit(self) -> AbstractContextManager[None]:
        """A block around one request: entered once it may be sent; raises an `AgentcliError`
        when it may not be sent at all. It sees the request's error, if any, as the block ends."""
        ...

"""The gate's questions put to the editor: `session/request_permission`.

The client is offered what the REPL offers (`PermissionRequest.options`): allow once, allow
always (when a rule can be suggested; the rule is saved where the REPL saves it), reject. Its
answer becomes the same `Answer` the REPL's would. A cancelled turn, a cancelled question, an
unknown option or a client gone away are a No: nothing runs that the user did not allow.
"""

from __future__ import annotations

from collections.abc import Callable

from agentcli.acp.connection import Connection, ConnectionClosed, RpcError
from agentcli.contracts import JSON
from agentcli.permissions.prompt import Answer, Choice, PermissionRequest

OPTION_KINDS: dict[Choice, str] = {"yes": "allow_once", "always": "allow_always", "no": "reject_once"}


class ClientPrompter:
    """A `Prompter` asking the ACP client; `call_id` finds the pending call the question is about."""

    def __init__(
        self, connection: Connection, session_id: Callable[[], str], call_id: Callable[[str, JSON], str | None]
    ) -> None:
        self.connection = connection
        self.session_id = session_id
        self.call_id = call_id

    def __call__(self, request: PermissionRequest) -> Answer:
        options = request.options()
        tool_call: JSON = {
            "toolCallId": self.call_id(request.tool, request.tool_input) or f"ask-{id(request)}",
            "title": f"{request.heading}: {request.label}",
            "rawInput": request.tool_input,
        }
        params = {
            "sessionId": self.session_id(),
            "toolCall": tool_call,
            "options": [
                {"optionId": option.choice, "name": option.label, "kind": OPTION_KINDS[option.choice]}
                for option in options
            ],
        }
        try:
            result = self.connection.call("session/request_permission", params, cancel=request.cancel)
        except (RpcError, ConnectionClosed) as error:
            return Answer.no(f"The editor did not answer the permission question ({error or 'it went away'}).")
        outcome = result.get("outcome") if result is not None else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return Answer.no()
        chosen = next((option.choice for option in options if option.choice == outcome.get("optionId")), None)
        return request.answer(chosen) if chosen is not None else Answer.no()

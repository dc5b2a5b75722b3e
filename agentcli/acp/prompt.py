"""A `session/prompt`'s content blocks as the text of one user message.

- `text`: as typed (a `/command` at the start works as in the REPL);
- `resource_link` (a file the user attached by reference): its path (or URI) in the text, so
  the model reads it with its tools, through the gate;
- `resource` (a file the editor embedded, with its text as the editor has it, unsaved changes
  included): its text, in a `<context uri="…">` block after the request;
- anything else (images, audio, binary resources: the agent does not offer them in
  `initialize`) is named in the text as left out, so neither the user nor the model is misled.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from agentcli.acp.connection import INVALID_PARAMS, RpcError


def prompt_text(blocks: object, cwd: Path) -> str:
    if not isinstance(blocks, list) or not blocks:
        raise RpcError(INVALID_PARAMS, "prompt must be a non-empty list of content blocks.")
    said: list[str] = []
    context: list[str] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            said.append(block["text"])
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            said.append(_where(block["uri"], cwd))
        elif kind == "resource" and isinstance(block.get("resource"), dict) and "text" in block["resource"]:
            resource = block["resource"]
            uri = str(resource.get("uri", ""))
            context.append(f'<context uri="{_where(uri, cwd)}">\n{resource["text"]}\n</context>')
        else:
            said.append(f"(an attachment of type {kind!r} was left out: agentcli takes text and files)")
    return "\n\n".join([" ".join(said), *context]) if context else " ".join(said)


def _where(uri: str, cwd: Path) -> str:
    """A `file://` URI as a path (relative to the project when inside it); any other URI as given."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)

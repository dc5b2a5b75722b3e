"""Reading one MCP configuration file: a JSON object, of bounded size, or a ValueError saying what to fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.bounds import JSON_DIGITS
from agentcli.regular_file import NotRegularFile, read_regular_file

MAX_CONFIG_BYTES = 1 << 20


def read_config_file(path: Path, limit: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """The JSON object of the MCP config `path` (at most `limit` bytes); raises FileNotFoundError,
    or ValueError saying what to fix."""
    try:
        raw = read_regular_file(path, limit + 1)
    except NotRegularFile as error:
        raise ValueError(f"{error.strerror or error}.") from None
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ValueError(f"{error.strerror or error}.") from None
    if len(raw) > limit:
        raise ValueError(f"over {limit:,} bytes{'; MCP configs are small JSON' if limit == MAX_CONFIG_BYTES else ''}.")
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text; save it as UTF-8.") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"not valid JSON (line {error.lineno}, column {error.colno}): {error.msg}.") from None
    except ValueError:  # valid JSON that Python will not read
        raise ValueError(f"it holds a number of more than {JSON_DIGITS:,} digits.") from None
    except RecursionError:
        raise ValueError("it is nested too deeply to read.") from None
    if not isinstance(data, dict):
        raise ValueError('it must hold a JSON object: {"mcpServers": {...}}.')
    return data

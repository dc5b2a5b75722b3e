"""A status line command for the tests: a small Python program, and settings that configure it.

It reads the file `behaviour` (nothing there: `ok`), appends its stdin (the JSON about the
session) to `inputs.jsonl` in its folder, writes the names of its environment variables to
`env.json` and its folder to `cwd`, then does what `behaviour` said:

- `ok`: prints `<model, magenta> in:<total input tokens> $<cost>`, then a second line (never shown);
- `fail`: writes two lines to stderr and exits 3;
- `block`: touches `blocked`, waits until the FIFO `gate` is written to, then prints as `ok` does;
- `hostile`: prints colours mixed with a screen clear, a new window title and a cursor move.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from agentcli.contracts import JSON
from tests.hooks_helpers import logged, write_settings

SCRIPT = r"""
import json, os, sys
from pathlib import Path
folder = Path(sys.argv[1])
behaviour = (folder / "behaviour").read_text() if (folder / "behaviour").exists() else "ok"
data = sys.stdin.read()
with open(folder / "inputs.jsonl", "a") as f:
    f.write(json.dumps(json.loads(data)) + "\n")
(folder / "env.json").write_text(json.dumps(sorted(os.environ)))
(folder / "cwd").write_text(os.getcwd())
if behaviour == "fail":
    sys.stderr.write("first words\nlast words\n")
    sys.exit(3)
if behaviour == "block":
    (folder / "blocked").touch()
    with open(folder / "gate") as gate:
        gate.read()
if behaviour == "hostile":
    sys.stdout.write("\x1b[2J\x1b]0;pwned\x07\x1b[31mred\x1b[0m\x1b[1;1Hmoved\x9b2J\n")
    sys.exit(0)
payload = json.loads(data)
model = payload["model"]["display_name"]
tokens = payload["context_window"]["total_input_tokens"]
print(f"\x1b[35m{model}\x1b[0m in:{tokens} ${payload['cost']['total_cost_usd']:.4f}")
print("a second line, never shown")
"""


def status_script(folder: Path) -> Path:
    """A folder holding the script (and, as it runs, what it was given), with the FIFO `gate`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "status.py").write_text(SCRIPT)
    os.mkfifo(folder / "gate")
    return folder


def status_settings(path: Path, folder: Path, **more: object) -> Path:
    """Settings at `path` whose `statusLine` runs the script of `folder`."""
    command = shlex.join([sys.executable, str(folder / "status.py"), str(folder)])
    return write_settings(path, {"statusLine": {"type": "command", "command": command, "padding": 0}, **more})


def inputs(folder: Path) -> list[JSON]:
    """What each run of the script was given, oldest first."""
    return logged(folder / "inputs.jsonl")


def behave(folder: Path, behaviour: str) -> None:
    (folder / "behaviour").write_text(behaviour)


def open_gate(folder: Path) -> None:
    """Let a script blocked on the FIFO go on (waits for it to have opened it)."""
    with open(folder / "gate", "w") as gate:
        gate.write("go")

"""Real hook scripts for the hook tests, and settings that configure them.

`HOOK` is a small Python program run as a hook process: it appends its stdin (one JSON line)
to the log file named first, then does what its options say: `--exit N`, `--stdout TEXT`,
`--stderr TEXT`, `--pid FILE` (write its pid, then sleep until killed), `--env FILE` (write its
environment as JSON), `--touch FILE` and `--await FILE` (create one file, then wait for
another to appear, exit 3 if it never does).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from agentcli.contracts import JSON

HOOK_SOURCE = r"""
import json, os, sys, time
args = sys.argv[1:]
log = args.pop(0)
data = sys.stdin.read()
with open(log, "a") as f:
    f.write(data.strip() + "\n")
options = dict(zip(args[::2], args[1::2]))
if "--env" in options:
    with open(options["--env"], "w") as f:
        json.dump(dict(os.environ), f)
if "--touch" in options:
    open(options["--touch"], "w").close()
if "--await" in options:
    for _ in range(3000):
        if os.path.exists(options["--await"]):
            break
        time.sleep(0.01)
    else:
        sys.exit(3)
if "--pid" in options:
    with open(options["--pid"] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.replace(options["--pid"] + ".tmp", options["--pid"])
    time.sleep(1000)
sys.stdout.write(options.get("--stdout", ""))
sys.stderr.write(options.get("--stderr", ""))
sys.exit(int(options.get("--exit", "0")))
"""


def hook_script(folder: Path) -> Path:
    path = folder / "hook.py"
    if not path.exists():
        path.write_text(HOOK_SOURCE)
    return path


def hook_command(folder: Path, log: Path, **options: Any) -> str:
    """The shell command running the hook script with `options` (`exit=2`, `stdout="..."`)."""
    words = [sys.executable, str(hook_script(folder)), str(log)]
    for name, value in options.items():
        words += [
            f"--{name}",
            value if isinstance(value, str) else json.dumps(value) if isinstance(value, dict) else str(value),
        ]
    return shlex.join(words)


def hook_entry(command: str, matcher: str | None = None, timeout: float | None = None) -> JSON:
    hook: JSON = {"type": "command", "command": command}
    if timeout is not None:
        hook["timeout"] = timeout
    entry: JSON = {"hooks": [hook]}
    if matcher is not None:
        entry["matcher"] = matcher
    return entry


def write_settings(path: Path, data: JSON) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def logged(log: Path) -> list[JSON]:
    """What each run of the hook was handed on stdin, in order."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]

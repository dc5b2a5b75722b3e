"""`agentcli acp` from its start to the editor's first answer (`initialize`), and to a session.

Beside the same machine's `agentcli --version` (the floor: the interpreter and agentcli's
package) and the import of the protocol's Python package (`acp`, which agentcli does not use:
its pydantic schema alone takes longer than the whole goal), when it is installed.
Goal: initialize answered in under 0.3 s. Usage: .venv/bin/python bench/acp_startup.py [runs]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def first_answers(runs: int, cwd: str, env: dict[str, str]) -> tuple[float, float]:
    """Median seconds until `initialize` is answered, and until `session/new` is."""
    initialized, opened = [], []
    for _ in range(runs):
        began = time.perf_counter()
        child = subprocess.Popen([AGENTCLI, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=cwd)
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n')
        child.stdin.flush()
        json.loads(child.stdout.readline())
        initialized.append(time.perf_counter() - began)
        new = {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}
        child.stdin.write(json.dumps(new).encode() + b"\n")
        child.stdin.flush()
        assert "result" in json.loads(child.stdout.readline())
        opened.append(time.perf_counter() - began)
        child.stdin.close()
        child.wait()
    return statistics.median(initialized), statistics.median(opened)


def timed(argv: list[str], runs: int, env: dict[str, str]) -> float | None:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        if subprocess.run(argv, capture_output=True, env=env).returncode != 0:
            return None
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "AGENTCLI_HOME": home, "HOME": home, "ANTHROPIC_API_KEY": "unused"}
        version = timed([AGENTCLI, "--version"], runs, env)
        acp_import = timed([sys.executable, "-c", "import acp.schema"], runs, env)
        initialized, opened = first_answers(runs, home, env)
    assert version is not None
    print(f"agentcli --version           {version * 1000:7.0f} ms   1.00x")
    ratio = initialized / version
    print(f"acp: initialize answered     {initialized * 1000:7.0f} ms   {ratio:4.2f}x   (goal < 300 ms)")
    print(f"acp: session/new answered    {opened * 1000:7.0f} ms   {opened / version:4.2f}x")
    if acp_import is not None:
        print(f"python -c 'import acp.schema' {acp_import * 1000:6.0f} ms   {acp_import / version:4.2f}x   (not used)")


if __name__ == "__main__":
    main()

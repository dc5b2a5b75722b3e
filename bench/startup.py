"""Start-up times: `--version`, `--help`, `run` without an API key (it must fail at once),
and the REPL until a typed key is echoed.

Compared with the cost of `import anthropic` alone, which these paths must not pay
before the user can type. Usage: .venv/bin/python bench/startup.py [runs]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.terminal import Terminal

AGENTCLI = str(Path(sys.executable).parent / "agentcli")


def timed(argv: list[str], runs: int, *, env: dict[str, str] | None = None, code: int = 0) -> float:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, env=env)
        samples.append(time.perf_counter() - began)
        assert done.returncode == code, done.stderr
    return statistics.median(samples)


def repl_echo(runs: int) -> tuple[float, float]:
    """Median seconds until the prompt is drawn, and until a typed key shows on screen."""
    drawn, echoed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "AGENTCLI_HOME": tmp, "TERM": "xterm-256color", "ANTHROPIC_API_KEY": "unused"}
        for _ in range(runs):
            began = time.perf_counter()
            terminal = Terminal([AGENTCLI], env=env, cwd=Path(tmp))
            terminal.wait_for("(shift-tab)")
            drawn.append(time.perf_counter() - began)
            terminal.type("z")
            terminal.wait_for("> z")
            echoed.append(time.perf_counter() - began)
            terminal.close()
    return statistics.median(drawn), statistics.median(echoed)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    sdk = timed([sys.executable, "-c", "import anthropic"], runs)
    version = timed([AGENTCLI, "--version"], runs)
    help_ = timed([AGENTCLI, "--help"], runs)
    no_key_env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")}
    no_key = timed([AGENTCLI, "run", "hi"], runs, env=no_key_env, code=1)
    drawn, echoed = repl_echo(runs)
    print(f"import anthropic alone : {sdk * 1000:7.0f} ms")
    print(f"agentcli --version     : {version * 1000:7.0f} ms  ({version / sdk:.2f} x the SDK import)")
    print(f"agentcli --help        : {help_ * 1000:7.0f} ms  ({help_ / sdk:.2f} x)")
    print(f"run without an API key : {no_key * 1000:7.0f} ms  ({no_key / sdk:.2f} x)")
    print(f"REPL prompt drawn      : {drawn * 1000:7.0f} ms  ({drawn / sdk:.2f} x)")
    print(f"REPL echoes a key      : {echoed * 1000:7.0f} ms  ({echoed / sdk:.2f} x)")


if __name__ == "__main__":
    main()

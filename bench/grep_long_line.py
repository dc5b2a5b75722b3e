"""Peak memory and time of one Grep (content mode) over a generated file that is one long line
(a minified bundle), in a fresh process.

Writes SIZE MB of `a`, the word `needle`, and SIZE MB of `b` on one line to a temporary folder,
runs the Grep tool on it once (ripgrep when installed) and reports the process's peak memory
(max RSS) beside its memory before the search, and the search's time. `PYTHONPATH=OTHER_TREE`
measures another tree. 100 MB: 497 MB peak and 3.9 s when rg's whole output was read, split and
decoded; 24 MB and 0.8 s once rg prints only the line's start (loaded 2-core machine).

Usage: .venv/bin/python bench/grep_long_line.py [SIZE_MB]
"""

from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agentcli.contracts import ToolContext
from agentcli.tools.grep import GrepTool
from agentcli.workspace.local import LocalWorkspace


def main() -> None:
    half = int(float(sys.argv[1] if len(sys.argv) > 1 else "100") * 1_000_000) // 2
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        with open(root / "bundle.min.js", "wb") as file:
            for part in (b"a", b"needle", b"b"):
                left = 1 if part == b"needle" else half
                while left > 0:  # a megabyte at a time: the writing must not set the peak
                    file.write(part * min(left, 1 << 20))
                    left -= 1 << 20
            file.write(b"\n")
        ctx = ToolContext(LocalWorkspace(root))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        started = time.perf_counter()
        result = GrepTool().call({"pattern": "needle", "output_mode": "content"}, ctx)
        took = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{2 * half / 1e6:.0f} MB line: peak {peak:.0f} MB (before the search {before:.0f} MB), {took:.2f} s")
    print(result.content[-60:])


if __name__ == "__main__":
    main()

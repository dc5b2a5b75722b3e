"""Running a program whose output is read with the cap applied while reading (`agentcli.capped_output`).

Real programs (`sh`, Python); what is asserted is what came back: the start of each stream, the
exact count of what was dropped, the exit code, and that nothing outlives a timeout.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agentcli.capped_output import run_capped
from tests.waiting import alive, wait_until

ENV = {"PATH": os.environ["PATH"]}


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_each_stream_keeps_its_start_and_counts_the_rest(tmp_path: Path) -> None:
    # stderr fills its pipe before stdout is written: both must be read at once, or it never ends
    code = "import sys; sys.stderr.write('e' * 3_000_000); sys.stdout.write('o' * 5_000_000); sys.exit(3)"

    done = run_capped(python(code), cwd=tmp_path, env=ENV, limit=1_000, timeout=60)

    assert (done.exit_code, done.timed_out) == (3, False)
    assert (done.stdout, done.stdout_cut) == (b"o" * 1_000, 5_000_000 - 1_000)
    assert (done.stderr, done.stderr_cut) == (b"e" * 1_000, 3_000_000 - 1_000)


def test_input_is_given_and_a_program_that_ignores_it_still_ends(tmp_path: Path) -> None:
    echoed = run_capped(["cat"], cwd=tmp_path, env=ENV, limit=100, timeout=60, stdin=b"hello")
    ignored = run_capped(["true"], cwd=tmp_path, env=ENV, limit=100, timeout=60, stdin=b"x" * 5_000_000)

    assert (echoed.exit_code, echoed.stdout) == (0, b"hello")
    assert (ignored.exit_code, ignored.timed_out) == (0, False)


def test_at_the_timeout_the_whole_group_is_killed_and_what_came_is_kept(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    command = f"echo started; sleep 600 & echo $! > {pid_file}; wait"

    done = run_capped(["sh", "-c", command], cwd=tmp_path, env=ENV, limit=100, timeout=1, own_group=True)

    assert (done.exit_code, done.timed_out, done.stdout) == (None, True, b"started\n")
    child = int(pid_file.read_text())
    wait_until(lambda: not alive(child), "the background child being killed")

"""Libraries' logging goes to the debug log (`$AGENTCLI_HOME/debug.log`), never the terminal
unless `--verbose`: a server printing to stdout, and any library's warnings."""

from __future__ import annotations

import logging
import stat
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.debug_log import MAX_BYTES, route_logging
from tests.conftest import RunCli
from tests.fake_anthropic import FakeAnthropic, reply, text, tool_use
from tests.mcp.helpers import raw_server, write_config

NOISE = ["Starting the noisy server v1.0 ...", "{not json at all", '{"jsonrpc": "2.0", "method": 5}']


@pytest.mark.parametrize("verbose", [False, True])
def test_a_server_printing_to_stdout_is_logged_not_shown(
    run_cli: RunCli, fake_api: FakeAnthropic, home: Path, tmp_path: Path, verbose: bool
) -> None:
    tools = [{"name": "hello", "reply": {"text": "hello there"}}]
    noisy = raw_server(tmp_path / "spec.json", tools=tools, noise=NOISE)
    write_config(home / ".agentcli" / "mcp.json", noisy=noisy)
    fake_api.script(reply(tool_use("mcp__noisy__hello", {}, id="toolu_1")), reply(text("Done.")))

    done = run_cli("run", *(["--verbose"] if verbose else []), "--allowed-tools", "mcp__noisy", "go")

    assert done.returncode == 0, done.stderr
    assert done.stdout == "Done.\n"
    assert fake_api.requests[1].body["messages"][-1]["content"][0]["content"] == "hello there"
    log = home / ".agentcli" / "debug.log"
    assert "wrote a line that is not a JSON-RPC message" in log.read_text()
    assert "Starting the noisy server" in log.read_text()
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert ("Starting the noisy server" in done.stderr) is verbose
    assert "Traceback" not in done.stderr or verbose


@pytest.fixture
def routed(tmp_path: Path) -> Iterator[Path]:
    """Logging routed to a debug log under `tmp_path` for the test, as before after it."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    logging.captureWarnings(False)  # an in-process run earlier in this worker may have left it on
    route_logging(tmp_path)
    yield tmp_path / "debug.log"
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    root.setLevel(level)
    logging.captureWarnings(False)


def test_any_librarys_records_and_warnings_go_to_the_log_and_nothing_to_stderr(
    routed: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    logging.getLogger("some.library").error("it went wrong", exc_info=ValueError("bad"))
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn("old api", DeprecationWarning, stacklevel=1)

    assert capfd.readouterr().err == ""
    logged = routed.read_text()
    assert "ERROR some.library: it went wrong" in logged and "ValueError: bad" in logged
    assert "DeprecationWarning: old api" in logged


def test_the_log_is_moved_aside_when_it_grows_past_a_megabyte(routed: Path) -> None:
    for _ in range(2 * MAX_BYTES // 1000 + 10):
        logging.getLogger("chatty").warning("x" * 1000)

    assert routed.stat().st_size <= MAX_BYTES + 2000
    older = routed.with_name("debug.log.1")
    assert MAX_BYTES < older.stat().st_size <= MAX_BYTES + 2000
    assert stat.S_IMODE(older.stat().st_mode) == 0o600

"""`bench/run --smoke --no-peers` runs to the end here and its JSON holds every measure the
benchmark suite promises. Benchmarks are not tests: no figure is judged, only present. The smoke
size takes every measure once on toy inputs, so this stays a few seconds of the suite."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bench import suite
from bench.common import Figure
from tests.tools.helpers import needs_rg

ROOT = Path(__file__).resolve().parent.parent

MEASURES = {
    "startup.version",
    "startup.help",
    "first_request",
    "first_request_tokens",
    "repl.painted",
    "repl.echoed",
    "repl.enter_to_request",
    "step_cpu.1-2",  # the smoke size's windows of a 10-step session (1-10, 40-50, 190-200 of 200 otherwise)
    "step_cpu.4-5",
    "step_cpu.9-10",
    "peak_memory",
    "render.10kb",  # 100 and 200 KB otherwise
    "render.20kb",
    "grep.rare_word",
    "grep.common_word",
    "grep.regex",
    "grep.glob_ts",
    "grep.four_parallel",
    "cache.read_share",
    "cache.written",
    "cache.cost_usd",
    "cache.side_requests",
    "parallel",
}
PEERS = ("Claude Code", "mini-swe-agent")
NO_RG = "not measured: rg is not on PATH (the Grep tool used its Python engine)"


def test_a_smoke_run_without_peers_writes_every_field(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(ROOT / "bench" / "run"), "--smoke", "--no-peers", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    [results] = (tmp_path / "results").glob("*-smoke.json")
    report = json.loads(results.read_text())
    assert {"date", "mode", "runs", "seconds", "machine", "versions", "peers", "price_table", "measures"} <= set(report)
    assert report["mode"] == "smoke" and report["runs"] == 1
    assert set(report["machine"]) == {"cpu", "cores", "load_1m", "os", "python"}
    assert report["versions"]["agentcli"].startswith("agentcli ")
    assert {name: peer["status"] for name, peer in report["peers"].items()} == {
        "agentcli": "ok",
        **dict.fromkeys(PEERS, "skipped: --no-peers"),
    }
    assert set(report["measures"]) == MEASURES
    for key, measure in report["measures"].items():
        agentcli = measure["values"]["agentcli"]
        assert "median" in agentcli or "value" in agentcli, (key, agentcli)
        for peer in PEERS:
            assert set(measure["values"][peer]) == {"status"}, (key, measure["values"][peer])
    grep = report["measures"]["grep.rare_word"]
    if shutil.which("rg"):  # both cases are also checked below, whichever this machine is
        assert grep["ratios"].keys() == {"Grep / rg"}
    else:
        assert grep["values"]["bare rg"] == {"status": NO_RG} and grep["ratios"] == {}
    assert report["measures"]["render.20kb"]["ratios"].keys() == {"20 KB / 10 KB (2.00 = linear)"}

    table = (tmp_path / "RESULTS.md").read_text()
    assert "bench/run --smoke" in table
    assert report["machine"]["cpu"] in table
    for measure in report["measures"].values():
        assert measure["title"].replace("|", "\\|") in table
    assert done.stdout.splitlines()[0].split()[:2] == ["measure", "unit"]


@needs_rg
def test_with_rg_each_grep_row_has_bare_rg_beside_it_and_their_ratio() -> None:
    rows = suite.grep([], files=30, runs=1)

    by_key = {row.key: row for row in rows}
    for key in ("grep.rare_word", "grep.common_word", "grep.regex", "grep.glob_ts"):
        assert isinstance(by_key[key].values["bare rg"], Figure), key
        assert by_key[key].ratios.keys() == {"Grep / rg"}, key


def test_without_rg_the_grep_rows_say_so_and_compare_nothing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no rg there: the Grep tool uses its Python engine

    rows = suite.grep([], files=30, runs=1)

    by_key = {row.key: row for row in rows}
    for key in ("grep.rare_word", "grep.common_word", "grep.regex", "grep.glob_ts"):
        assert by_key[key].values["bare rg"] == NO_RG, key
        assert isinstance(by_key[key].values["agentcli"], Figure), key
        assert by_key[key].ratios == {}, key
    assert by_key["grep.four_parallel"].ratios.keys() == {"sequential / concurrent (speed-up)"}

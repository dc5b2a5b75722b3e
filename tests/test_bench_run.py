"""`bench/run --quick --no-peers` in smoke form: it runs to the end here and its JSON holds every
measure the benchmark suite promises. Benchmarks are not tests: no figure is judged, only present."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MEASURES = {
    "startup.version",
    "startup.help",
    "first_request",
    "first_request_tokens",
    "repl.painted",
    "repl.echoed",
    "repl.enter_to_request",
    "step_cpu.1-10",
    "step_cpu.40-50",
    "step_cpu.190-200",
    "peak_memory",
    "render.100kb",
    "render.200kb",
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


def test_quick_run_without_peers_writes_every_field(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(ROOT / "bench" / "run"), "--quick", "--no-peers", "--runs", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]

    [results] = (tmp_path / "results").glob("*.json")
    report = json.loads(results.read_text())
    assert {"date", "mode", "runs", "seconds", "machine", "versions", "peers", "price_table", "measures"} <= set(report)
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
    assert report["measures"]["grep.rare_word"]["ratios"].keys() == {"Grep / rg"}
    assert report["measures"]["render.200kb"]["ratios"].keys() == {"200 KB / 100 KB (2.00 = linear)"}

    table = (tmp_path / "RESULTS.md").read_text()
    assert report["machine"]["cpu"] in table
    for measure in report["measures"].values():
        assert measure["title"].replace("|", "\\|") in table
    assert done.stdout.splitlines()[0].split()[:2] == ["measure", "unit"]

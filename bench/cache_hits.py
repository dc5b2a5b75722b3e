"""Prompt-cache hit ratio over a 12-step session, and the size of a lean first request.

Drives the installed `agentcli run` (a subprocess, as a user would) against the fake
Anthropic server, which simulates prompt caching from the request's cache_control
breakpoints and reports input / cache_creation / cache_read tokens in each usage.
Token counts are the fake's: ceil(len(canonical JSON of each block) / 4), i.e. about
4 characters per token; a real tokenizer would differ by some percent either way.

Reported:
- cache ratio = Σ cache_read / Σ (input + cache_creation + cache_read) over the 12 requests
  of one session (11 tool-using steps, then the answer), in two situations:
  - "warm": an earlier session (another project) ran on the same server a moment before,
    as in daily use; the tools + core instructions prefix is then already cached;
  - "cold": the very first request ever, so everything is written once. No strategy can
    beat 11/12 here: the 12th request's new content is written, never read.
- the first request of a one-word prompt ("hi"): total tokens, split into tools, system
  and messages.

Usage: .venv/bin/python bench/cache_hits.py
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.peers import Step, claude_style_call  # noqa: E402
from tests.fake_anthropic import FakeAnthropic, reply, text  # noqa: E402

AGENTCLI = shutil.which("agentcli", path=str(Path(sys.executable).parent)) or "agentcli"
STEPS = 12

SOURCE = '''"""Inventory: stock levels per warehouse."""

from dataclasses import dataclass, field


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0


@dataclass
class Warehouse:
    name: str
    items: dict[str, Item] = field(default_factory=dict)

    def add(self, sku: str, name: str, quantity: int) -> None:
        item = self.items.setdefault(sku, Item(sku, name))
        item.quantity += quantity

    def remove(self, sku: str, quantity: int) -> None:
        item = self.items[sku]
        if item.quantity < quantity:
            raise ValueError(f"only {item.quantity} of {sku} left")
        item.quantity -= quantity

    def total(self) -> int:
        return sum(item.quantity for item in self.items.values())
'''

TESTS = """from inventory import Warehouse


def test_add_and_total():
    w = Warehouse("main")
    w.add("a1", "bolt", 5)
    w.add("a1", "bolt", 2)
    assert w.total() == 7


def test_remove_too_many():
    w = Warehouse("main")
    w.add("a1", "bolt", 1)
    try:
        w.remove("a1", 2)
    except ValueError as error:
        assert "only 1" in str(error)
"""

CLAUDE_MD = """# Inventory service
- Run tests with `python -m pytest -q`.
- Keep functions small; type hints everywhere.
- Never change the public API of `Warehouse` without asking.
"""


SESSION: list[tuple[str, Step]] = [
    ("Checking the working tree first.", ("bash", {"command": "git status --short"})),
    ("Looking for the remove method.", ("grep", {"pattern": "def remove", "output_mode": "content", "-n": True})),
    ("Reading the module.", ("read", {"path": "inventory.py"})),
    ("Now the tests.", ("read", {"path": "test_inventory.py"})),
    ("Listing the project files.", ("bash", {"command": "ls -la"})),
    ("Counting uses of quantity.", ("grep", {"pattern": "quantity", "output_mode": "count"})),
    ("Looking at remove again.", ("read", {"path": "inventory.py", "offset": 20, "limit": 10})),
    ("Checking recent history.", ("bash", {"command": "git log --oneline -5"})),
    ("Where ValueError is raised.", ("grep", {"pattern": "ValueError", "output_mode": "files_with_matches"})),
    ("Checking the project rules.", ("read", {"path": "CLAUDE.md"})),
    ("Sizing the files.", ("bash", {"command": "wc -l inventory.py test_inventory.py"})),
]
"""11 tool-using turns of a small bug-hunting session, in no harness's tools (bench/peers.py
turns each into a harness's own call); the answer makes the 12th turn."""

ANSWER = (
    "`Warehouse.remove` raises KeyError for an unknown SKU instead of a clear ValueError; "
    "the rest is consistent and the tests cover the happy path and the shortage case."
)


def session_script() -> list[Any]:
    """The session as agentcli's replies: 11 tool-using turns, then the answer."""
    replies: list[Any] = [reply(text(note), claude_style_call(step, Path())) for note, step in SESSION]
    replies.append(reply(text(ANSWER)))
    assert len(replies) == STEPS
    return replies


def make_project(path: Path) -> Path:
    path.mkdir(parents=True)
    env = {**os.environ, **GIT_IDENTITY}
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "inventory.py").write_text(SOURCE)
    (path / "test_inventory.py").write_text(TESTS)
    (path / "CLAUDE.md").write_text(CLAUDE_MD)
    shutil.copytree(ROOT / ".commands", path / ".commands")
    subprocess.run(["git", "add", "."], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "Inventory service"], cwd=path, check=True, env=env)
    return path


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def run_cli(api: FakeAnthropic, cwd: Path, home: Path, *args: str, env: dict[str, str] | None = None) -> None:
    extra = env or {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENTCLI_", "CLAUDE"))}
    env.update(api.env, HOME=str(home), AGENTCLI_HOME=str(home / ".agentcli"), NO_COLOR="1", **GIT_IDENTITY)
    env.update(extra)
    done = subprocess.run(
        [AGENTCLI, "run", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"agentcli run failed ({done.returncode}):\n{done.stderr}")


def ratio(usages: list[dict[str, int]]) -> float:
    read = sum(u["cache_read_input_tokens"] for u in usages)
    total = sum(u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] for u in usages)
    return read / total


def reads_everything_seen(usages: list[dict[str, int]]) -> bool:
    """Each request reads exactly what the one before it sent (the most a cache can give)."""
    totals = [u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] for u in usages]
    return all(u["cache_read_input_tokens"] == before for u, before in zip(usages[1:], totals, strict=False))


def cost_units(usages: list[dict[str, int]]) -> float:
    return sum(
        u["input_tokens"] + 1.25 * u["cache_creation_input_tokens"] + 0.1 * u["cache_read_input_tokens"] for u in usages
    )


def tokens(block: Any) -> int:
    """The fake server's count for one block: ceil(len(canonical JSON) / 4)."""
    clean = {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block
    return math.ceil(len(json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)) / 4)


def first_request_size(body: dict[str, Any]) -> dict[str, int]:
    """Tokens of a request's tools, system and messages, as the fake counts them (a string
    system prompt or message content counts as one text block)."""
    tools = sum(tokens(t) for t in body.get("tools", []))
    system = sum(tokens(b) for b in _blocks(body.get("system", [])))
    messages = sum(tokens({"role": m["role"], **b}) for m in body["messages"] for b in _blocks(m["content"]))
    return {"tools": tools, "system": system, "messages": messages, "total": tools + system + messages}


def _blocks(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def measured_session(tmp: Path, warm: bool) -> list[dict[str, int]]:
    home = tmp / "home"
    (home / ".agentcli").mkdir(parents=True, exist_ok=True)
    project = make_project(tmp / "project")
    with FakeAnthropic() as api:
        if warm:
            earlier = make_project(tmp / "earlier-project")
            api.script(reply(text("Hello.")))
            run_cli(api, earlier, home, "hi")
        skip = len(api.usage_log)
        api.script(*session_script())
        run_cli(api, project, home, "Review inventory.py for bugs", "--allowed-tools", "Bash")
        return api.usage_log[skip:]


def one_word_first_request(tmp: Path) -> dict[str, int]:
    home = tmp / "home"
    (home / ".agentcli").mkdir(parents=True)
    project = make_project(tmp / "project")
    with FakeAnthropic() as api:
        api.script(reply(text("Hello.")))
        run_cli(api, project, home, "hi")
        size = first_request_size(api.requests[0].body)
        usage = api.usage_log[0]
    fake_total = usage["input_tokens"] + usage["cache_creation_input_tokens"] + usage["cache_read_input_tokens"]
    assert fake_total == size["total"], (fake_total, size)
    return size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = one_word_first_request(root / "size")
        print("First request for the one-word prompt 'hi' (tokens ≈ chars/4, as the fake counts):")
        print(f"  tools {size['tools']:,} + system {size['system']:,} + messages {size['messages']:,}")
        print(f"  = {size['total']:,} tokens (target < 6,350; Claude Code sends about 12,700)")
        print()
        for warm in (True, False):
            usages = measured_session(root / ("warm" if warm else "cold"), warm)
            label = "warm (an earlier session cached tools + core)" if warm else "cold (first request ever)"
            print(f"{STEPS}-step session, {label}:")
            print("  step   input  cache_write  cache_read")
            for n, u in enumerate(usages, 1):
                print(
                    f"  {n:4}  {u['input_tokens']:6,}  {u['cache_creation_input_tokens']:11,}  "
                    f"{u['cache_read_input_tokens']:10,}"
                )
            print(f"  cache_read / (input + cache_creation + cache_read) = {ratio(usages):.5f}")
            print(f"  every request read the whole previous prompt from cache: {reads_everything_seen(usages)}")
            written = sum(u["cache_creation_input_tokens"] for u in usages)
            print(f"  tokens written (new content, never seen before): {written:,}")
            print(f"  cost in uncached-input-token equivalents (read 0.1x, write 1.25x): {cost_units(usages):,.0f}")
            print()


if __name__ == "__main__":
    main()

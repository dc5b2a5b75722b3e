"""Streaming Markdown render cost: is it linear in the answer's length?

Generates a Markdown answer (headings, paragraphs, bullet and numbered lists, code fences
with blank lines, tables, quotes), streams it in 10-character deltas into `MarkdownStream`
on a Console that believes it is a truecolor terminal (so the live tail region is drawn)
writing to a null file, and reports CPU time (time.process_time) for 100 KB and 200 KB and
their ratio (2.0 = linear). For contrast, a naive renderer that re-renders the whole
Markdown on every delta (`Live.update(Markdown(text), refresh=True)`) on smaller answers.

Usage: .venv/bin/python bench/render_bench.py [--quick]   (--quick: one run each, naive up to 10 KB; ~20 s)
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from agentcli.ui.markdown_stream import MarkdownStream

DELTA = 10
VOCABULARY = """
the a harness model tool call result stream render block tail terminal cache prompt token file path line
diff patch test run loop turn user assistant message context window budget retry error event queue thread
process signal buffer parser lexer syntax node tree
"""
WORDS = VOCABULARY.split()


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    pick = rng.random()
    if pick < 0.2:
        words[rng.randrange(len(words))] = f"`{rng.choice(WORDS)}()`"
    elif pick < 0.35:
        words[rng.randrange(len(words))] = f"**{rng.choice(WORDS)}**"
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(2, 5)))


def _code(rng: random.Random) -> str:
    lines = ["```python"]
    for index in range(rng.randint(4, 16)):
        if index and rng.random() < 0.15:
            lines.append("")
        indent = "    " * rng.randint(0, 2)
        lines.append(f"{indent}{rng.choice(WORDS)}_{index} = {rng.choice(WORDS)}({rng.randint(0, 99)})")
    lines.append("```")
    return "\n".join(lines)


def _list(rng: random.Random) -> str:
    ordered = rng.random() < 0.4
    loose = rng.random() < 0.25
    items = []
    for index in range(rng.randint(3, 8)):
        marker = f"{index + 1}." if ordered else "-"
        item = f"{marker} {_sentence(rng)}"
        if rng.random() < 0.2:
            item += f"\n   - {_sentence(rng)}"
        items.append(item)
    return ("\n\n" if loose else "\n").join(items)


def _table(rng: random.Random) -> str:
    rows = ["| name | kind | count |", "|---|---|---:|"]
    rows += [f"| {rng.choice(WORDS)} | {rng.choice(WORDS)} | {rng.randint(1, 999)} |" for _ in range(rng.randint(2, 6))]
    return "\n".join(rows)


def markdown_answer(size: int, seed: int = 0) -> str:
    """A deterministic Markdown answer of about `size` characters."""
    rng = random.Random(seed)
    blocks: list[str] = []
    length = 0
    while length < size:
        pick = rng.random()
        if pick < 0.1:
            block = f"{'#' * rng.randint(1, 3)} {_sentence(rng).rstrip('.')}"
        elif pick < 0.45:
            block = _paragraph(rng)
        elif pick < 0.65:
            block = _list(rng)
        elif pick < 0.85:
            block = _code(rng)
        elif pick < 0.93:
            block = _table(rng)
        else:
            block = "> " + _sentence(rng) + "\n> " + _sentence(rng)
        blocks.append(block)
        length += len(block) + 2
    return "\n\n".join(blocks)[:size]


def _console() -> Console:
    null = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the console
    return Console(file=null, force_terminal=True, color_system="truecolor", width=100, height=40)


def streamed_cpu(text: str, refresh_interval: float = 0.05) -> tuple[float, MarkdownStream]:
    stream = MarkdownStream(_console(), refresh_interval=refresh_interval)
    start = time.process_time()
    for index in range(0, len(text), DELTA):
        stream.feed(text[index : index + DELTA])
    stream.finish()
    return time.process_time() - start, stream


def whole_cpu(text: str) -> float:
    console = _console()
    start = time.process_time()
    console.print(Markdown(text))
    return time.process_time() - start


def naive_cpu(text: str) -> float:
    console = _console()
    start = time.process_time()
    with Live(console=console, auto_refresh=False, transient=True, vertical_overflow="visible") as live:
        for index in range(0, len(text), DELTA):
            live.update(Markdown(text[: index + DELTA]), refresh=True)
    return time.process_time() - start


def main() -> None:
    quick = "--quick" in sys.argv
    kb = 1024
    print(f"MarkdownStream, {DELTA}-character deltas, Console(force_terminal=True) to a null file")
    timings: dict[int, float] = {}
    for size in (100 * kb, 200 * kb):
        text = markdown_answer(size)
        best = min(streamed_cpu(text)[0] for _ in range(1 if quick else 3))
        timings[size] = best
        print(f"  {size // kb:>4} KB: {best:6.3f} s CPU  ({best / (size / kb) * 1000:.2f} ms per KB)")
    print(f"  ratio 200 KB / 100 KB: {timings[200 * kb] / timings[100 * kb]:.2f}  (2.00 = linear)")
    print(
        f"  lower bound, the 200 KB answer rendered once as a whole: {whole_cpu(markdown_answer(200 * kb)):.3f} s CPU"
    )

    print("Worst case: tail redrawn on every delta (refresh_interval=0)")
    worst: dict[int, float] = {}
    for size in (50 * kb, 100 * kb):
        worst[size] = streamed_cpu(markdown_answer(size), refresh_interval=0)[0]
        print(f"  {size // kb:>4} KB: {worst[size]:6.3f} s CPU")
    print(f"  ratio 100 KB / 50 KB: {worst[100 * kb] / worst[50 * kb]:.2f}")

    print("Naive: re-render the whole Markdown on every delta")
    naive: dict[int, float] = {}
    for size in (5 * kb, 10 * kb) if quick else (5 * kb, 10 * kb, 20 * kb):
        text = markdown_answer(size)
        naive[size] = naive_cpu(text)
        mine = streamed_cpu(text)[0]
        print(f"  {size // kb:>4} KB: {naive[size]:6.3f} s CPU  (MarkdownStream: {mine:.3f} s)")
    small, large = sorted(naive)[-2:]
    ratio = naive[large] / naive[small]
    print(f"  ratio {large // kb} KB / {small // kb} KB: {ratio:.2f}  (2.00 = linear, 4.00 = quadratic)")
    estimate = naive[large] * (200 * kb / large) ** 2
    print(f"  extrapolated (quadratic) naive cost for 200 KB: ~{estimate:.0f} s CPU")


if __name__ == "__main__":
    main()

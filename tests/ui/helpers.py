"""Consoles that write to memory, and ways to stream text into them."""

from __future__ import annotations

import io
import random
from typing import Literal

from rich.console import Console

from agentcli.ui.markdown import AnswerMarkdown
from agentcli.ui.markdown_stream import MarkdownStream

ANSWER = """# Fixing the parser

The bug is in `parse_line()`: it **drops** the last token when a line
ends without a newline. See [the docs](https://example.com/docs) for details.

## What I changed

1. Kept the trailing token.
2. Added a test:

   ```python
   def test_trailing():

       assert parse("a b") == ["a", "b"]
   ```

3. Updated the changelog.

- one bullet
- two bullets

- a third after a blank line
  with a continuation line

```bash
pytest -q

# all green
```
That ran in 0.4 s.

| file | lines |
|------|------:|
| parser.py | 12 |
| test_parser.py | 30 |

> Note: the old behaviour
> was documented nowhere.

---
Setext heading
--------------

    indented code

    still indented code

Done — anything else?"""


ColorSystem = Literal["auto", "standard", "256", "truecolor", "windows"]
"""What rich's Console takes as `color_system`."""


def make_console(
    *,
    terminal: bool = False,
    color: ColorSystem | None = None,
    no_color: bool | None = None,
    width: int = 80,
    height: int = 25,
) -> Console:
    return Console(
        file=io.StringIO(),
        width=width,
        height=height,
        force_terminal=terminal,
        color_system=color,
        no_color=no_color,
        legacy_windows=False,
    )


def output(console: Console) -> str:
    file = console.file
    assert isinstance(file, io.StringIO)
    return file.getvalue()


def render_whole(text: str, console: Console) -> str:
    """The whole answer rendered at once (the tests' terminals show no hyperlinks: see conftest)."""
    console.print(AnswerMarkdown(text, hyperlinks=False))
    return output(console)


class FakeClock:
    def __init__(self, step: float = 0.0) -> None:
        self.now = 1000.0
        self.step = step
        """Seconds that pass on every reading."""

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def deltas(text: str, seed: int = 0, low: int = 1, high: int = 10) -> list[str]:
    """`text` cut into pieces of `low`..`high` characters, as a model streams it."""
    rng = random.Random(seed)
    pieces = []
    index = 0
    while index < len(text):
        size = rng.randint(low, high)
        pieces.append(text[index : index + size])
        index += size
    return pieces


def stream_all(text: str, console: Console, *, seed: int = 0, clock: FakeClock | None = None) -> str:
    with MarkdownStream(console, clock=clock or FakeClock(step=0.02)) as stream:
        for piece in deltas(text, seed):
            stream.feed(piece)
    return output(console)

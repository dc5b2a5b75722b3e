"""Render a streamed Markdown answer (`AnswerMarkdown`), in time linear in its length.

The text is cut into finished top-level blocks (a paragraph ended by a blank line, a closed
code fence, a heading, a list once something that is not part of it follows…). Each finished
block is rendered once and printed to the scrollback; only the open tail is shown live, in a
transient region that is redrawn at most every `refresh_interval` seconds and never taller
than the screen. The concatenation of the committed blocks is exactly what `AnswerMarkdown`
prints for the whole answer at once (blank lines between blocks follow rich's own rule).

Known difference from a whole-document render: a link reference definition (`[x]: url`)
only applies inside its own block.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from types import TracebackType

from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markdown import MarkdownElement, UnknownElement
from rich.segment import Segment

from agentcli.safe_text import for_terminal
from agentcli.ui.markdown import AnswerMarkdown, is_plain, terminal_shows_hyperlinks

_FENCE_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}(?=[^`]*$)|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")


def _indent(line: str) -> int:
    width = 0
    for char in line:
        if char == " ":
            width += 1
        elif char == "\t":
            width += 4 - width % 4
        else:
            break
    return width


class BlockSplitter:
    """Cuts a growing Markdown text into finished top-level blocks and an open tail.

    Works line by line: each character is examined a bounded number of times, so feeding a
    whole answer costs time linear in its length however it is split into deltas.
    """

    def __init__(self) -> None:
        self._partial: list[str] = []
        """The current line, not yet ended by a newline, as the pieces that arrived."""
        self._block: list[str] = []
        """Complete lines of the open block."""
        self._blanks: list[str] = []
        """Blank lines after the open block that may still turn out to belong to it."""
        self._fence: tuple[str, int, int] | None = None
        """(fence character, fence length, indent) while inside a code fence."""
        self._fence_start = 0
        """Index in `_block` of the open fence's first line."""
        self._fence_top_level = False
        self._in_list = False
        self._indented_code = False

    def feed(self, text: str) -> list[str]:
        """Take the next piece of the answer; return the blocks it finished, as source text."""
        if "\n" not in text:
            if text:
                self._partial.append(text)
            return []
        lines = text.split("\n")
        self._partial.append(lines[0])
        lines[0] = "".join(self._partial)
        self._partial = [lines[-1]] if lines[-1] else []
        finished: list[str] = []
        for line in lines[:-1]:
            finished.extend(self._take_line(line.removesuffix("\r")))
        return finished

    def finish(self) -> list[str]:
        """The answer is complete: return every block still open (an unclosed fence included)."""
        finished = self._take_line("".join(self._partial)) if self._partial else []
        self._partial = []
        if self._block:
            finished.extend(self._cut())
        return finished

    def tail(self, max_lines: int | None = None, max_chars: int | None = None) -> str:
        """The open, unfinished text (for the live preview), optionally only its last lines.

        When cut, a block inside a code fence keeps its opening line so it still renders as code.
        """
        total = len(self._block) + len(self._blanks)
        if max_lines is None or total <= max_lines:
            lines = [*self._block, *self._blanks]
        else:  # copy only what is shown: the tail is previewed many times while it grows
            start = total - max_lines
            in_fence = self._fence is not None and self._fence_start < start
            opener = [self._block[self._fence_start]] if in_fence else []
            lines = [*opener, *self._block[start:], *self._blanks][-max_lines - len(opener) :]
        partial = "".join(self._partial)
        if max_chars is not None and len(partial) > max_chars:
            partial = partial[-max_chars:]
        if partial:
            lines.append(partial)
        return "\n".join(lines)

    def _take_line(self, line: str) -> list[str]:
        if self._fence is not None:
            self._block.append(line)
            if self._closes_fence(line):
                self._fence = None
                if self._fence_top_level:
                    return self._cut()
            return []
        if not line.strip(" \t"):
            if not self._block:
                return []
            if self._in_list or self._indented_code:
                # A list (or indented code) may go on after blank lines: wait for the next line.
                self._blanks.append(line)
                return []
            return self._cut()

        indent = _indent(line)
        finished: list[str] = []
        if self._blanks:
            continues = (self._in_list and (indent > 0 or _LIST_ITEM.match(line) is not None)) or (
                self._indented_code and indent >= 4
            )
            if continues:
                self._block.extend(self._blanks)
                self._blanks = []
            else:
                finished = self._cut()
        if not self._block:
            self._in_list = False
            self._indented_code = indent >= 4
        elif indent < 4:
            self._indented_code = False

        if not self._indented_code and (indent <= 3 or self._in_list) and self._opens_fence(line, indent):
            # An unindented fence (or one outside any list) is a block of its own once closed;
            # an indented one inside a list belongs to the list item.
            self._fence_top_level = indent == 0 or (indent <= 3 and not self._in_list)
            if self._fence_top_level:
                self._in_list = False
            self._block.append(line)
            return finished
        if _ATX_HEADING.match(line) and (indent == 0 or not self._in_list):
            self._block.append(line)
            finished.extend(self._cut())
            return finished
        if indent <= 3 and _LIST_ITEM.match(line):
            self._in_list = True
        self._block.append(line)
        return finished

    def _opens_fence(self, line: str, indent: int) -> bool:
        """Does `line` open a code fence (which blank lines do not end)? HTML is text (see
        `AnswerMarkdown`), so `<pre>` or `<!--` opens nothing."""
        fence = _FENCE_OPEN.match(line)
        if fence is None:
            return False
        marker = fence.group("fence")
        self._fence = (marker[0], len(marker), indent)
        self._fence_start = len(self._block)
        return True

    def _closes_fence(self, line: str) -> bool:
        assert self._fence is not None
        char, length, indent = self._fence
        stripped = line.strip(" \t")
        return _indent(line) <= indent + 3 and len(stripped) >= length and stripped == char * len(stripped)

    def _cut(self) -> list[str]:
        text = "\n".join(self._block)
        self._block = []
        self._blanks = []
        self._fence = None
        self._in_list = False
        self._indented_code = False
        return [text]


_NOT_ELEMENTS = frozenset({"text", "hardbreak", "softbreak", "link_open", "link_close"})


def _flatten(tokens: Iterable[Token]) -> Iterable[Token]:
    for token in tokens:
        if token.children and token.type != "fence" and token.tag != "img":
            yield from _flatten(token.children)
        else:
            yield token


def _element_class(token: Token) -> type[MarkdownElement]:
    kind = token.type.removesuffix("_close") + "_open" if token.nesting == -1 else token.type
    return AnswerMarkdown.elements.get(kind) or UnknownElement


def _is_container(element: type[MarkdownElement]) -> bool:
    """Containers (lists, quotes, tables) render their children themselves."""
    return element.on_child_close is not MarkdownElement.on_child_close


def _blank_line_rule(tokens: list[Token], previous: bool | None) -> tuple[bool, bool | None]:
    """Replay rich's `new_line` flag over one block rendered on its own.

    rich writes a blank line before an element it renders directly when the element closed
    just before it (at any depth, inside that element too) has `new_line` set. A block
    rendered alone starts with the flag off, and `AnswerMarkdown` drops a blank line that
    would open its output, so the blank line before a block's first directly rendered element
    is added by hand. `previous` is the flag after the block before (None: this block opens
    the answer, and nothing goes before it).
    Returns (add a blank line before the block, the flag after it).
    """
    flag = previous
    blank_line_before: bool | None = None
    open_containers: list[bool] = []
    for token in _flatten(tokens):
        if token.type in _NOT_ELEMENTS:
            continue
        if token.tag in AnswerMarkdown.inlines and token.type not in ("fence", "code_block"):
            continue
        element = _element_class(token)
        if token.nesting == 1:
            open_containers.append(_is_container(element))
            continue
        if token.nesting == -1:
            open_containers.pop()
        rendered_directly = not open_containers or not open_containers[-1]
        if blank_line_before is None and rendered_directly and token.type != "inline":
            blank_line_before = bool(flag) and previous is not None
        flag = element.new_line
    return bool(blank_line_before), flag


class _Committed:
    """Finished blocks, each preceded by the blank line rich would put before it."""

    def __init__(self, blocks: list[tuple[AnswerMarkdown, bool]], plain: bool) -> None:
        self.blocks = blocks
        self.plain = plain

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for markdown, blank_line_before in self.blocks:
            if blank_line_before:
                yield Segment.line()
            segments: Iterable[Segment] = console.render(markdown, options)
            yield from Segment.strip_styles(segments) if self.plain else segments


class _TailView:
    """The live region: the open tail rendered as Markdown, cropped to its last screenful."""

    def __init__(self, stream: MarkdownStream) -> None:
        self.stream = stream
        self._key: tuple[str, int, int, bool | None] | None = None
        self._lines: list[list[Segment]] = []

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        height = max(1, options.size.height - 1)
        text = self.stream._splitter.tail(max_lines=height + 8, max_chars=options.max_width * height)
        blank_line_before = self.stream._new_line
        key = (text, options.max_width, height, blank_line_before)
        if key != self._key:
            self._key = key
            lines: list[list[Segment]] = []
            if text.strip():
                markdown = self.stream._markdown(text)
                lines = console.render_lines(markdown, options, pad=False)
                if _blank_line_rule(markdown.parsed, blank_line_before)[0]:
                    lines.insert(0, [])
            self._lines = lines[-height:] or [[]]
        new_line = Segment.line()
        for index, line in enumerate(self._lines):
            if index:
                yield new_line
            yield from line


class MarkdownStream:
    """Streams one assistant answer to `console` as Markdown.

    Call `feed(delta)` as text arrives and `finish()` at the end (or use it as a context
    manager). In a terminal with colour, the open tail is shown in a transient live region;
    otherwise (not a TTY, TERM=dumb, NO_COLOR, `color_system=None`) only finished blocks are
    printed, as plain text without any escape codes. Links are hyperlinks only where the
    terminal shows them (`hyperlinks=None`: `terminal_shows_hyperlinks()`), never in plain text;
    elsewhere a link's URL follows its text.

    Not thread-safe: feed it from one thread. While it runs, do not print to the same
    console from elsewhere except through it (rich would draw above the live tail, which is
    harmless, but a second live display nests with this one).
    """

    def __init__(
        self,
        console: Console,
        *,
        code_theme: str = "monokai",
        hyperlinks: bool | None = None,
        refresh_interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console
        self.code_theme = code_theme
        self.refresh_interval = refresh_interval
        self._clock = clock
        self.plain = is_plain(console)
        """True when no live region is drawn and output carries no styles."""
        self.hyperlinks = not self.plain and (terminal_shows_hyperlinks() if hyperlinks is None else hyperlinks)
        self._splitter = BlockSplitter()
        self._new_line: bool | None = None
        """rich's blank-line flag after the committed blocks (None before the first one)."""
        self._live: Live | None = None
        self._last_refresh: float | None = None
        self._dirty = False
        self._finished = False

    def feed(self, delta: str) -> None:
        """Take the next piece of the answer."""
        if self._finished:
            raise RuntimeError("MarkdownStream.feed() after finish()")
        if not delta:
            return
        # The model's text must not drive the terminal: controls are shown escaped (rich would
        # pass ESC and C1 through). A \r is dropped, as rich would drop it anyway.
        blocks = self._splitter.feed(for_terminal(delta.replace("\r", "")))
        if blocks:
            self._commit(blocks)
        if not self.plain:
            self._dirty = True
            now = self._clock()
            if self._last_refresh is None or now - self._last_refresh >= self.refresh_interval:
                self._refresh(now)

    def flush(self) -> None:
        """Redraw the live tail now if it changed (e.g. when the stream goes quiet)."""
        if self._dirty and not self._finished:
            self._refresh(self._clock())

    def finish(self) -> None:
        """Commit the open tail and remove the live region. Safe to call twice."""
        if self._finished:
            return
        self._finished = True
        try:
            blocks = self._splitter.finish()
            if blocks:
                self._commit(blocks)
        finally:
            if self._live is not None:
                self._live.stop()  # also shows the cursor again
                self._live = None

    def __enter__(self) -> MarkdownStream:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.finish()

    def _markdown(self, text: str) -> AnswerMarkdown:
        return AnswerMarkdown(text, code_theme=self.code_theme, hyperlinks=self.hyperlinks)

    def _commit(self, blocks: list[str]) -> None:
        rendered: list[tuple[AnswerMarkdown, bool]] = []
        for text in blocks:
            markdown = self._markdown(text)
            blank_line_before, self._new_line = _blank_line_rule(markdown.parsed, self._new_line)
            rendered.append((markdown, blank_line_before))
        # With a live region active, rich prints this above it and redraws the tail once.
        self.console.print(_Committed(rendered, self.plain))

    def _refresh(self, now: float) -> None:
        self._last_refresh = now
        self._dirty = False
        if self._live is None:
            self._live = Live(
                _TailView(self),
                console=self.console,
                auto_refresh=False,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
        self._live.refresh()

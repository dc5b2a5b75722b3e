"""How an answer's Markdown looks in the terminal: rich's renderer, adjusted to how models write.

`AnswerMarkdown` is rich's `Markdown` with these differences:

- HTML is text. `<name>`, `<br>`, `<div>…</div>` are shown as written, never interpreted and
  never dropped (rich drops every tag but `<kbd>`): models write placeholders like
  `Hello, <name>!` all the time. This is CommonMark with its `html` option off.
- Headings are left-aligned (rich centres H1).
- Without hyperlinks a link reads `text (url)`, and a link whose text is its URL
  (`<https://…>`) shows it once. `terminal_shows_hyperlinks` says whether the terminal can
  make a link of the text instead.
- The output never starts with a blank line (rich starts one that opens with a list or a
  quote with one).
- A code block has one blank line before and after it wherever it stands, inside list items
  and quotes too (rich pads it with a blank row of its own, so at the top level it had two,
  and none inside a list item); right after a horizontal rule, which separates on its own, none.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.console import Console, ConsoleOptions, RenderResult
from rich.containers import Renderables
from rich.markdown import (
    BlockQuote,
    CodeBlock,
    Heading,
    ListElement,
    ListItem,
    Markdown,
    MarkdownContext,
    MarkdownElement,
)
from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["strikethrough", "table"])
"""One parser for every answer (building one costs more than parsing a short block)."""

_HYPERLINK_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode", "ghostty", "Hyper", "Tabby"})
"""`TERM_PROGRAM` of terminals that show OSC 8 hyperlinks."""
_HYPERLINK_TERMS = ("xterm-kitty", "xterm-ghostty", "wezterm", "foot", "alacritty")
_VTE_WITH_HYPERLINKS = 5000
"""GNOME Terminal and the other VTE terminals show hyperlinks since VTE 0.50."""
_KONSOLE_WITH_HYPERLINKS = 210400
"""Konsole 21.04."""


def terminal_shows_hyperlinks(environ: Mapping[str, str] = os.environ) -> bool:
    """Is the terminal known to turn OSC 8 escape sequences into clickable links?

    Recognised by the variables terminals set; inside tmux or screen, which pass hyperlinks on
    only when configured to, the answer is no. `FORCE_HYPERLINK=1` (or `0`) decides instead,
    as for other command-line programs.
    """
    forced = environ.get("FORCE_HYPERLINK")
    if forced is not None:
        return forced.strip() != "0"
    term = environ.get("TERM", "")
    if "TMUX" in environ or term.startswith(("screen", "tmux")):
        return False
    if environ.get("TERM_PROGRAM") in _HYPERLINK_PROGRAMS or term.startswith(_HYPERLINK_TERMS):
        return True
    if "KITTY_WINDOW_ID" in environ or "WT_SESSION" in environ:
        return True
    return _version(environ, "VTE_VERSION") >= _VTE_WITH_HYPERLINKS or (
        _version(environ, "KONSOLE_VERSION") >= _KONSOLE_WITH_HYPERLINKS
    )


def _version(environ: Mapping[str, str], name: str) -> int:
    value = environ.get(name, "")
    return int(value) if value.isdigit() else 0


def is_plain(console: Console) -> bool:
    """Does `console` get text without any escape codes (not a terminal, TERM=dumb, NO_COLOR…)?"""
    return not console.is_interactive or console.no_color or console.color_system is None


class _Heading(Heading):
    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        text = self.text.copy()
        text.justify = "left"
        yield text


class _CodeBlock(CodeBlock):
    """Highlighted on its background, without rich's blank rows above and below it: the blank
    lines around a code block come from the spacing rules (see `_SpacedChildren`)."""

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield Syntax(str(self.text).rstrip(), self.lexer_name, theme=self.theme, word_wrap=True, padding=(0, 1))


def _code_at_edge(element: MarkdownElement, edge: int) -> bool:
    """Does `element` begin (`edge` 0) or end (`edge` -1) with a code block, however deeply nested?"""
    while children := _children(element):
        element = children[edge]
    return isinstance(element, CodeBlock)


def _children(element: MarkdownElement) -> list[MarkdownElement]:
    if isinstance(element, _SpacedChildren):
        return element.children
    if isinstance(element, ListElement):
        return list(element.items)
    return []


def _code_between(before: MarkdownElement, after: MarkdownElement) -> bool:
    return _code_at_edge(before, -1) or _code_at_edge(after, 0)


class _SpacedChildren(MarkdownElement):
    """A container that puts a blank line between a code block and its neighbours (rich's list
    items and quotes stack their children without any)."""

    elements: Renderables

    def __init__(self) -> None:
        super().__init__()
        self.children: list[MarkdownElement] = []

    def on_child_close(self, context: MarkdownContext, child: MarkdownElement) -> bool:
        if self.children and _code_between(self.children[-1], child):
            self.elements.append(Text())
        self.children.append(child)
        self.elements.append(child)
        return False


class _ListItem(_SpacedChildren, ListItem):
    pass


class _BlockQuote(_SpacedChildren, BlockQuote):
    pass


class _List(ListElement):
    """Between two items, a blank line when a code block ends the first or begins the second."""

    def on_child_close(self, context: MarkdownContext, child: MarkdownElement) -> bool:
        assert isinstance(child, ListItem)
        if self.items and _code_between(self.items[-1], child):
            self.items[-1].elements.append(Text())  # not before the next item: its first line carries its bullet
        self.items.append(child)
        return False


def _unwrap_self_links(children: list[Token]) -> list[Token]:
    """Drop the link tokens around a link whose text is its URL: without hyperlinks rich would
    show it twice, `https://x.org (https://x.org)`."""
    kept: list[Token] = []
    opened: int | None = None
    for token in children:
        if token.type == "link_open":
            opened = len(kept)
        elif token.type == "link_close" and opened is not None:
            href = str(kept[opened].attrs.get("href", ""))
            shown = "".join(t.content for t in kept[opened + 1 :])
            at, opened = opened, None
            if shown in (href, href.removeprefix("mailto:")):
                del kept[at]
                continue
        kept.append(token)
    return kept


class AnswerMarkdown(Markdown):
    """rich's `Markdown` with the differences in this module's docstring."""

    elements = {
        **Markdown.elements,
        "heading_open": _Heading,
        "fence": _CodeBlock,
        "code_block": _CodeBlock,
        "blockquote_open": _BlockQuote,
        "bullet_list_open": _List,
        "ordered_list_open": _List,
        "list_item_open": _ListItem,
    }

    def __init__(self, markup: str, *, code_theme: str = "monokai", hyperlinks: bool = True) -> None:
        # rich parses in its constructor with HTML on: let it parse nothing, then parse here.
        super().__init__("", code_theme=code_theme, hyperlinks=hyperlinks)
        self.markup = markup
        self.parsed = _PARSER.parse(markup)
        if not hyperlinks:
            for token in self.parsed:
                if token.children:
                    token.children = _unwrap_self_links(token.children)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rendered = iter(super().__rich_console__(console, options))
        first = next(rendered, None)
        # rich's blank-line flag is set by the paragraphs inside a list or a quote too, so one
        # that opens the document gets a blank line above it.
        if first is not None and first != Segment.line():
            yield first
        yield from rendered

"""What a fetched body says, as text a model reads: HTML as Markdown, plain text and JSON as they
are, PDF as its text.

HTML goes through `html-to-markdown` (a Rust converter, imported at the first page, never at
start-up; MIT, no dependencies). On 100 real pages (trafilatura's evaluation set,
`bench/web_convert.py`) it kept 95.3% of the passages a reader needs, as markdownify did and
against html2text's 89.9%, while leaving out more boilerplate (25%, against 17% and 21%: it
drops navigation and forms), at 3.5 times html2text's speed and 6.6 times markdownify's; its own
import is about 35 ms. Code blocks keep their fences and language, tables stay tables.

PDF needs the optional `pypdfium2` (`pip install 'agentcli[pdf]'`): PDFium's text, about 8
times faster than pure-Python readers. Without it a PDF is an error saying how to add it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from html_to_markdown import ConversionOptions

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
JSON_SUFFIX = "+json"
PDF_TYPE = "application/pdf"
PDF_EXTRA = "pip install 'agentcli[pdf]'"
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


class UnreadableContent(Exception):
    """A body WebFetch cannot turn into text; the message says what it was and what to do."""


def page_text(body: bytes, content_type: str, charset: str | None) -> tuple[str, str]:
    """The text of `body` for the model, and what it was read as (`HTML`, `text`, `JSON`, `PDF`).
    Raises UnreadableContent for a kind of content it cannot read (an image, an archive)."""
    kind = content_type or _sniffed(body)
    if kind in HTML_TYPES:
        return html_markdown(_decoded(body, charset or _meta_charset(body))), "HTML"
    if kind == "application/json" or kind.endswith(JSON_SUFFIX):
        return _decoded(body, charset), "JSON"
    if kind.startswith("text/") or kind in ("application/xml", "application/javascript") or kind.endswith("+xml"):
        return _decoded(body, charset), "text"
    if kind == PDF_TYPE:
        return pdf_text(body), "PDF"
    raise UnreadableContent(
        f"The response is {kind or 'of no stated type'} ({len(body):,} bytes), which WebFetch cannot read as text."
    )


def html_markdown(html: str) -> str:
    """`html` as Markdown, without navigation, forms, scripts or images."""
    from html_to_markdown import convert

    return (convert(html, _options()).content or "").strip()


@cache
def _options() -> ConversionOptions:
    from html_to_markdown import ConversionOptions, PreprocessingOptions

    return ConversionOptions(
        extract_metadata=False,
        skip_images=True,
        preprocessing=PreprocessingOptions(enabled=True, preset="standard", remove_navigation=True, remove_forms=True),
    )


def pdf_text(body: bytes) -> str:
    """The text of a PDF, page by page; UnreadableContent without `pypdfium2` or for a broken file."""
    try:
        import pypdfium2
    except ImportError:
        raise UnreadableContent(
            f"The response is a PDF ({len(body):,} bytes); reading PDFs needs the optional pypdfium2 package: "
            f"{PDF_EXTRA}."
        ) from None
    try:
        document = pypdfium2.PdfDocument(body)
    except pypdfium2.PdfiumError as error:
        raise UnreadableContent(f"The response claims to be a PDF but cannot be read as one ({error}).") from None
    try:
        pages = [document[index].get_textpage().get_text_range() for index in range(len(document))]
    finally:
        document.close()
    return "\n\n".join(page.replace("\r\n", "\n").strip() for page in pages).strip()


def _decoded(body: bytes, charset: str | None) -> str:
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def _meta_charset(body: bytes) -> str | None:
    found = _META_CHARSET.search(body[:4096])
    return found.group(1).decode("ascii").lower() if found else None


def _sniffed(body: bytes) -> str:
    """A media type for a body sent without one."""
    start = body[:512].lstrip().lower()
    if start.startswith(b"%pdf"):
        return PDF_TYPE
    if start.startswith((b"<!doctype html", b"<html")) or b"<body" in start:
        return "text/html"
    if start.startswith((b"{", b"[")):
        return "application/json"
    try:
        body[:4096].decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    return "text/plain"

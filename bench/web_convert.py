"""HTML to Markdown for WebFetch: html-to-markdown beside the converters it was chosen over.

    .venv/bin/python bench/web_convert.py PAGES_FOLDER [LIMIT]

PAGES_FOLDER holds real pages (`*.html`; trafilatura's evaluation set, tests/eval/ of its
repository, is a good one: 900 pages from news sites, blogs and documentation). With that set's
`evaldata.json` beside the pages (or in the folder above), each converter is also scored: the
share of the passages a reader needs that its Markdown keeps (`with`), and the share of
boilerplate passages it leaves out (`without`). html2text and markdownify are compared when they
are installed (`pip install html2text markdownify`); otherwise only html-to-markdown is timed.
Reports milliseconds per page, as ratios to html-to-markdown's, measured side by side.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agentcli.web.convert import html_markdown  # noqa: E402

Convert = Callable[[str], str]


def converters() -> dict[str, Convert]:
    found: dict[str, Convert] = {"html-to-markdown": html_markdown}
    if importlib.util.find_spec("html2text"):
        import html2text

        def with_html2text(html: str) -> str:
            converter = html2text.HTML2Text()
            converter.body_width = 0
            converter.ignore_images = True
            return str(converter.handle(html))

        found["html2text"] = with_html2text
    if importlib.util.find_spec("markdownify"):
        from markdownify import markdownify

        found["markdownify"] = lambda html: str(markdownify(html, strip=["script", "style"]))
    return found


def words(text: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", text.lower()).split())


def main() -> None:
    folder = Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    pages = sorted(folder.glob("*.html"))[:limit]
    labels: dict[str, dict[str, list[str]]] = {}
    for place in (folder / "evaldata.json", folder.parent / "evaldata.json"):
        if place.exists():
            labels = {entry["file"]: entry for entry in json.loads(place.read_text()).values()}
            break
    texts = [(page.name, page.read_bytes().decode("utf-8", errors="replace")) for page in pages]
    results: dict[str, tuple[float, float | None, float | None]] = {}
    for name, convert in converters().items():
        kept = needed = left_out = boilerplate = 0
        began = time.perf_counter()
        outputs = [(file, words(convert(html))) for file, html in texts]
        seconds = time.perf_counter() - began
        for file, output in outputs:
            entry = labels.get(file, {})
            needed += len(entry.get("with", []))
            kept += sum(words(passage) in output for passage in entry.get("with", []))
            boilerplate += len(entry.get("without", []))
            left_out += sum(words(passage) not in output for passage in entry.get("without", []))
        results[name] = (
            1000 * seconds / len(texts),
            kept / needed if needed else None,
            left_out / boilerplate if boilerplate else None,
        )
    base = results["html-to-markdown"][0]
    print(f"{len(texts)} pages from {folder}")
    for name, (ms, kept_share, left_share) in results.items():
        scores = "" if kept_share is None else f"  keeps {kept_share:.1%} of needed passages"
        if left_share is not None:
            scores += f", leaves out {left_share:.1%} of boilerplate"
        print(f"{name:18} {ms:7.1f} ms/page  ({ms / base:.1f}x){scores}")


if __name__ == "__main__":
    main()

"""Explaining an Edit whose old_string is not in the file: where the closest text is, and how it differs."""

from __future__ import annotations

import difflib
import re

from agentcli.tools.textfile import split_lines

MAX_SHOWN_LINES = 30
MAX_NOTES = 5
FUZZY_BUDGET = 40_000_000
"""Upper bound on (file characters x old_string characters) for the similarity scan."""
_LINE_NUMBER_PREFIX = re.compile(r"^\s*\d+\t")


def explain_missing(text: str, old: str, name: str) -> str:
    """One paragraph for the model: the closest region with line numbers and what differs."""
    file_lines = split_lines(text)
    old_lines = split_lines(old.replace("\r\n", "\n")) or [""]
    message = f"old_string was not found in {name}."
    numbered = [line for line in old_lines if line.strip()]
    if numbered and all(_LINE_NUMBER_PREFIX.match(line) for line in numbered):
        return (
            f"{message} It seems to include the line-number prefixes from Read's output "
            "(spaces, number, tab); leave those out and copy only the text after the tab."
        )
    start, similar = _whitespace_match(file_lines, old_lines)
    if start is None:
        start, score = _fuzzy_match(file_lines, old_lines)
        if start is None or score < 0.4:
            return f"{message} No similar text either; Read the file again and copy the exact text."
        similar = False
    region = file_lines[start : start + len(old_lines)]
    where = f"line {start + 1}" if len(region) == 1 else f"lines {start + 1}-{start + len(region)}"
    header = f"Only whitespace differs from {where}:" if similar else f"The closest match is {where}:"
    shown = "\n".join(f"{start + 1 + i:6}\t{line}" for i, line in enumerate(region[:MAX_SHOWN_LINES]))
    notes = _differences(region, old_lines, start)
    parts = [f"{message} {header}", shown]
    if notes:
        parts.append("Differences: " + "; ".join(notes) + ".")
    parts.append("Copy the text exactly as the file has it (indentation included), then try again.")
    return "\n".join(parts)


def _norm(line: str) -> str:
    return " ".join(line.split())


def _whitespace_match(file_lines: list[str], old_lines: list[str]) -> tuple[int | None, bool]:
    """A region equal to old_string once whitespace is normalised (first/last lines may be partial)."""
    want = [_norm(line) for line in old_lines]
    have = [_norm(line) for line in file_lines]
    n = len(want)
    for i in range(len(have) - n + 1):
        window = have[i : i + n]
        if n == 1:
            if want[0] and want[0] in window[0]:
                return i, True
            continue
        if window[0].endswith(want[0]) and window[-1].startswith(want[-1]) and window[1:-1] == want[1:-1]:
            return i, True
    return None, False


def _fuzzy_match(file_lines: list[str], old_lines: list[str]) -> tuple[int | None, float]:
    n = len(old_lines)
    target = "\n".join(old_lines)
    if not file_lines or len(target) * sum(len(line) + 1 for line in file_lines) > FUZZY_BUDGET:
        return None, 0.0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    best, best_start = 0.0, None
    for i in range(max(1, len(file_lines) - n + 1)):
        matcher.set_seq1("\n".join(file_lines[i : i + n]))
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        score = matcher.ratio()
        if score > best:
            best, best_start = score, i
    return best_start, best


def _differences(region: list[str], old_lines: list[str], start: int) -> list[str]:
    notes: list[str] = []
    for i, (have, want) in enumerate(zip(region, old_lines, strict=False)):
        if have == want or (i in (0, len(old_lines) - 1) and want in have):
            continue
        where = f"line {start + 1 + i}"
        if _norm(have) != _norm(want):
            notes.append(f"{where} reads {have.strip()[:80]!r} in the file but {want.strip()[:80]!r} in old_string")
        elif _indent(have) != _indent(want):
            notes.append(
                f"{where}: the file indents with {_describe(_indent(have))}, old_string with {_describe(_indent(want))}"
            )
        elif have.rstrip() == want.rstrip():
            side = "the file" if len(have) > len(want) else "old_string"
            notes.append(f"{where}: trailing whitespace only in {side}")
        else:
            notes.append(f"{where}: spacing inside the line differs")
        if len(notes) >= MAX_NOTES:
            break
    return notes


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _describe(indent: str) -> str:
    if not indent:
        return "nothing"
    tabs, spaces = indent.count("\t"), indent.count(" ")
    parts = []
    if tabs:
        parts.append(f"{tabs} tab" + ("s" if tabs > 1 else ""))
    if spaces:
        parts.append(f"{spaces} space" + ("s" if spaces > 1 else ""))
    return " + ".join(parts)

"""A tiny terminal emulator: enough of VT100 to replay what rich writes and read the screen.

It understands text, CR, LF (as CR LF, like a tty with onlcr), cursor up/down, erase in line,
and skips colours, cursor visibility and hyperlinks. Rows are unbounded (screen plus
scrollback), which is what a user can read after the output has scrolled.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"\x1b\[(?P<params>[0-9;?]*)(?P<final>[@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|(?P<char>[\s\S])")


class Screen:
    def __init__(self) -> None:
        self.rows: list[list[str]] = [[]]
        self.row = 0
        self.col = 0

    def feed(self, data: str) -> Screen:
        for match in _TOKEN.finditer(data):
            char = match.group("char")
            final = match.group("final")
            if char is not None:
                self._char(char)
            elif final is not None:
                self._csi(match.group("params"), final)
        return self

    def _char(self, char: str) -> None:
        if char == "\n":
            self.row += 1
            self.col = 0
            while len(self.rows) <= self.row:
                self.rows.append([])
        elif char == "\r":
            self.col = 0
        else:
            line = self.rows[self.row]
            line.extend(" " * (self.col + 1 - len(line)))
            line[self.col] = char
            self.col += 1

    def _csi(self, params: str, final: str) -> None:
        count = int(params) if params.isdigit() else 1
        if final == "A":
            self.row = max(0, self.row - count)
        elif final == "B":
            self.row += count
            while len(self.rows) <= self.row:
                self.rows.append([])
        elif final == "K":
            line = self.rows[self.row]
            if params == "2":
                line.clear()
            elif params in ("", "0"):
                del line[self.col :]

    def lines(self) -> list[str]:
        """Every row, right-trimmed, without trailing empty rows."""
        text = ["".join(row).rstrip() for row in self.rows]
        while text and not text[-1]:
            text.pop()
        return text

    def text(self) -> str:
        return "\n".join(self.lines())


def screen_of(data: str) -> str:
    return Screen().feed(data).text()

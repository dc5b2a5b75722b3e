"""Messages between agentcli and the sandbox's supervisor (and each command's starter inside it).

A message is one JSON object, sent over a Unix stream socket as a 4-byte big-endian length and
the UTF-8 text, with open file descriptors (a command's output pipe) passed alongside it
(SCM_RIGHTS). Strings that hold bytes that are not UTF-8 (file names, a command's argument)
travel as Python's surrogate escapes, which JSON writes as `\\udcXX` and reads back as they were.

Standard library only: the supervisor imports it inside the sandbox with `python -I -S`.
"""

from __future__ import annotations

import array
import json
import socket
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported inside the sandbox (see `supervisor`)
    from collections.abc import Sequence
    from typing import Any

    Message = dict[str, Any]
else:
    Message = dict

MAX_MESSAGE = 64 << 20
"""A message longer than this is a broken peer, not a request."""
MAX_FDS = 4
_HEADER = struct.Struct(">I")


class ChannelClosed(Exception):
    """The other end went away (mid-message, or before answering)."""


def send(sock: socket.socket, message: Message, fds: Sequence[int] = ()) -> None:
    """Send `message` (and `fds`, passed along with its first bytes). Raises OSError."""
    body = json.dumps(message, ensure_ascii=True).encode("ascii")
    data = _HEADER.pack(len(body)) + body
    ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
    sent = sock.sendmsg([data], ancillary)
    if sent < len(data):
        sock.sendall(data[sent:])


def receive(sock: socket.socket) -> tuple[Message, list[int]] | None:
    """The next message and the descriptors that came with it; None when the other end closed
    the channel between messages. Raises ChannelClosed when it closed mid-message, ValueError
    for a malformed message."""
    size = socket.CMSG_SPACE(MAX_FDS * array.array("i").itemsize)
    header, ancillary, _flags, _address = sock.recvmsg(_HEADER.size, size)
    fds = _descriptors(ancillary)
    if not header:
        return None
    header += _exactly(sock, _HEADER.size - len(header))
    (length,) = _HEADER.unpack(header)
    if length > MAX_MESSAGE:
        raise ValueError(f"a message of {length} bytes")
    message = json.loads(_exactly(sock, length).decode("ascii"))
    if not isinstance(message, dict):
        raise ValueError("a message that is not a JSON object")
    return message, fds


def _exactly(sock: socket.socket, count: int) -> bytes:
    chunks = []
    while count > 0:
        chunk = sock.recv(min(count, 1 << 20))
        if not chunk:
            raise ChannelClosed("the channel closed in the middle of a message")
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def _descriptors(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return list(fds)

"""The system-call filter every sandboxed command runs under (seccomp, classic BPF).

What bubblewrap's namespaces leave open, and so what the filter refuses with EPERM:

- Unix sockets: a socket file on the machine (a Docker daemon's, an SSH or GPG agent's, the
  session bus) is reachable by path from inside any mount namespace, and a read-only mount does
  not stop `connect`. So `socket(AF_UNIX, …)` is refused, and so is `socketpair(AF_UNIX,
  SOCK_DGRAM)` (a datagram socket may `connect` to any path later). A stream `socketpair`, which
  is connected for good, stays allowed (shells, Node and Python use them among their own
  processes). The setting `sandbox.network.allowAllUnixSockets` lifts this part;
  `sandbox.network.allowUnixSockets` lifts it for stream sockets (`allow_unix_streams`), since
  the filter cannot read the path a `connect` names.
- New user namespaces (`unshare` or `clone` with CLONE_NEWUSER): inside one a command would
  hold every capability again. `clone3`, whose flags the filter cannot read, answers ENOSYS,
  so the C library falls back to `clone`. (bubblewrap's own `--disable-userns` would also
  forbid the fresh /proc each command gets.)
- io_uring, which performs socket and file operations that this filter would not see.
- The kernel keyrings (`add_key`, `keyctl`, `request_key`), which may hold the user's secrets.
- `bpf`, `perf_event_open`, `userfaultfd`: rarely needed by a build, often by an exploit.
- Any system call of another ABI than the machine's own (x32, 32-bit compat), whose numbers the
  filter does not know: refused wholesale.

Only x86-64 and AArch64 are known; elsewhere `program` raises `Unsupported` and the sandbox does
not start (it never runs without the filter). agentcli builds it, and the supervisor installs
it in each starter (`linux.install_filter`), which needs `no_new_privs`: bubblewrap sets it for
everything in the sandbox.
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

AF_UNIX = 1
CLONE_NEWUSER = 0x10000000
SOCK_STREAM = 1
SOCK_DGRAM = 2
SOCK_TYPE_MASK = 0xF
"""`socketpair`'s type argument also carries SOCK_NONBLOCK and SOCK_CLOEXEC."""

_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_AND_K = 0x54
_RET_K = 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_CLONE3 = 435
"""The same number on x86-64 and AArch64."""
_NR = 0
_ARCH = 4
_ARG0 = 16
_ARG1 = 24
_X32_BIT = 0x40000000


class Unsupported(Exception):
    """The machine's architecture is one the filter does not know."""


@dataclass(frozen=True)
class _Abi:
    audit_arch: int
    socket: int
    socketpair: int
    unshare: int
    clone: int
    refused: tuple[int, ...]
    """add_key, keyctl, request_key, io_uring_setup/enter/register, bpf, perf_event_open, userfaultfd."""
    x32: bool = False
    """Numbers with bit 30 set are another ABI's (x86-64's x32)."""


_ABIS = {
    "x86_64": _Abi(0xC000003E, 41, 53, 272, 56, (248, 250, 249, 425, 426, 427, 321, 298, 323), x32=True),
    "aarch64": _Abi(0xC00000B7, 198, 199, 97, 220, (217, 219, 218, 425, 426, 427, 280, 241, 282)),
}
_ABIS["amd64"] = _ABIS["x86_64"]
_ABIS["arm64"] = _ABIS["aarch64"]


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _unix_type_check(kind: int, *, refused: bool, refuse: bytes, allow: bytes) -> list[bytes]:
    """For `socket` and `socketpair`: another family than AF_UNIX is allowed; an AF_UNIX one of
    type `kind` is refused (`refused`), or is the only AF_UNIX type allowed."""
    on_kind = (0, 1) if refused else (1, 0)  # jump to `refuse` or to `allow` when the type is `kind`
    return [
        _op(_LD_W_ABS, _ARG0),
        _op(_JEQ_K, AF_UNIX, 0, 4),
        _op(_LD_W_ABS, _ARG1),
        _op(_AND_K, SOCK_TYPE_MASK),
        _op(_JEQ_K, kind, *on_kind),
        refuse,
        allow,
    ]


def program(allow_unix_sockets: bool = False, machine: str | None = None, *, allow_unix_streams: bool = False) -> bytes:
    """The filter as `struct sock_filter`s, for `linux.install_filter` (or bubblewrap's `--seccomp`)."""
    name = machine or platform.machine()
    abi = _ABIS.get(name.lower())
    if abi is None:
        raise Unsupported(f"the sandbox's system-call filter does not know the {name} architecture")
    refuse = _op(_RET_K, _ERRNO | errno.EPERM)
    allow = _op(_RET_K, _ALLOW)
    # Built back to front, so each jump knows how far its target is.
    socketpair_check = _unix_type_check(SOCK_DGRAM, refused=True, refuse=refuse, allow=allow)
    socket_check = [_op(_LD_W_ABS, _ARG0), _op(_JEQ_K, AF_UNIX, 0, 1), refuse, allow]
    if allow_unix_streams:
        socket_check = _unix_type_check(SOCK_STREAM, refused=False, refuse=refuse, allow=allow)
    tail: list[bytes] = [allow]
    if not allow_unix_sockets:
        tail = [
            _op(_JEQ_K, abi.socket, 0, len(socket_check)),
            *socket_check,
            _op(_JEQ_K, abi.socketpair, 0, len(socketpair_check)),
            *socketpair_check,
            allow,
        ]
    body: list[bytes] = [_op(_JEQ_K, _CLONE3, 0, 1), _op(_RET_K, _ERRNO | errno.ENOSYS)]
    for number in abi.refused:
        body += [_op(_JEQ_K, number, 0, 1), refuse]
    for number in (abi.unshare, abi.clone):  # flags in the first argument: no new user namespace
        body += [_op(_JEQ_K, number, 0, 3), _op(_LD_W_ABS, _ARG0), _op(_JSET_K, CLONE_NEWUSER, 0, 1), refuse]
        body += [_op(_LD_W_ABS, _NR)]
    head = [_op(_LD_W_ABS, _ARCH), _op(_JEQ_K, abi.audit_arch, 1, 0), refuse, _op(_LD_W_ABS, _NR)]
    if abi.x32:
        head += [_op(_JGE_K, _X32_BIT, 0, 1), refuse]
    return b"".join([*head, *body, *tail])

"""The few Linux system calls the sandbox's supervisor makes that Python 3.11's `os` lacks:
new namespaces (and going back to one), bind mounts, dropping capabilities, being undumpable,
installing a system-call filter (built by `seccomp`), and a pidfd's exit status.

Standard library only (ctypes): imported inside the sandbox by the supervisor.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import struct

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_SLAVE = 1 << 19
MS_RELATIME = 1 << 21
# statvfs flag → the mount flag a read-only remount must repeat (the kernel refuses to drop a locked one)
_KEPT_FLAGS = {
    os.ST_NOSUID: MS_NOSUID,
    os.ST_NODEV: MS_NODEV,
    os.ST_NOEXEC: MS_NOEXEC,
    os.ST_NOATIME: MS_NOATIME,
    os.ST_NODIRATIME: MS_NODIRATIME,
    os.ST_RELATIME: MS_RELATIME,
}
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
_CAPABILITY_VERSION_3 = 0x20080522
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
PIDFD_INFO_EXIT = 1 << 3
_PIDFD_INFO_SIZE = 64
_PIDFD_INFO_EXIT_CODE = 60
"""`struct pidfd_info`'s size and where `exit_code` sits in it (Linux 6.15)."""
PIDFD_GET_INFO = (3 << 30) | (_PIDFD_INFO_SIZE << 16) | (0xFF << 8) | 11

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def setns(fd: int, kind: int) -> None:
    """Join the namespace `fd` refers to (for a PID namespace: the one the next children are born in)."""
    _check(_libc.setns(fd, kind), "setns")


def mount(source: str | None, target: str, fstype: str | None, flags: int) -> None:
    def c(text: str | None) -> bytes | None:
        return None if text is None else os.fsencode(text)

    _check(_libc.mount(c(source), c(target), c(fstype), flags, None), f"mount {target}")


def bind(source: str, target: str, *, read_only: bool) -> None:
    """Mount `source` at `target` (both existing), read-only if asked, keeping the flags the
    mount it comes from has."""
    mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        kept = os.statvfs(target).f_flag
        flags = MS_BIND | MS_REMOUNT | MS_RDONLY
        for bit, flag in _KEPT_FLAGS.items():
            if kept & bit:
                flags |= flag
        mount(None, target, None, flags)


def undumpable() -> None:
    """No core dumps, and no ptrace or /proc/PID/mem access by processes without privileges."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_bounding_set() -> None:
    """Empty the bounding set (and the ambient one): no program executed later gains a
    capability, even as uid 0. What the process holds now, it keeps (`drop_capabilities`).
    Raises OSError when any is left in them."""
    with open("/proc/sys/kernel/cap_last_cap") as file:
        last = int(file.read())
    for capability in range(last + 1):
        _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl(PR_CAP_AMBIENT)")
    with open("/proc/self/status") as file:
        left = [line for line in file if line.startswith(("CapBnd:", "CapAmb:"))]
    if any(int(line.split()[1], 16) for line in left):
        raise OSError(1, "capabilities are left after dropping them: " + " ".join(line.strip() for line in left))


def drop_capabilities(*, bounding_set: bool = True) -> None:
    """Give up every capability for good: none now, none for any program executed later (the
    bounding set is emptied first, unless `drop_bounding_set` did it already). Raises OSError
    when any is left."""
    if bounding_set:
        drop_bounding_set()
    header = _Header(_CAPABILITY_VERSION_3, 0)
    _check(_libc.capset(ctypes.byref(header), (_Data * 2)()), "capset")
    held = (_Data * 2)()
    _check(_libc.capget(ctypes.byref(header), held), "capget")
    if any(part.effective or part.permitted or part.inheritable for part in held):
        raise OSError(1, "capabilities are left after dropping them")


class _Filter(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_filter(program: bytes) -> None:
    """Put the calling thread (and every process it starts from now on) under the system-call
    filter `program` (`seccomp.program`). Raises OSError when the kernel refuses it (no
    `no_new_privs`, no seccomp)."""
    buffer = ctypes.create_string_buffer(program)
    prog = _Filter(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot install the system-call filter: {os.strerror(code)}")


def exit_status(pidfd: int) -> int | None:
    """The wait status of the exited process `pidfd` refers to, as the kernel keeps it for a
    pidfd's holders (Linux 6.15 and later), whoever reaped it; None while it is not known yet.
    Raises OSError where the kernel cannot tell."""
    info = bytearray(_PIDFD_INFO_SIZE)
    struct.pack_into("=Q", info, 0, PIDFD_INFO_EXIT)
    fcntl.ioctl(pidfd, PIDFD_GET_INFO, info)
    (mask,) = struct.unpack_from("=Q", info, 0)
    if not mask & PIDFD_INFO_EXIT:
        return None
    (status,) = struct.unpack_from("=i", info, _PIDFD_INFO_EXIT_CODE)
    return int(status)

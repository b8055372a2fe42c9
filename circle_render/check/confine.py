"""What ``render check``'s worker does to itself before a submission's code is imported: Linux's
Landlock (the files it may read and write), no capabilities, no core files. Standard library
only: the worker loads this file by path, before importing anything else (so before NumPy
starts any thread: Landlock binds the calling thread and what it starts later).

Landlock grants access beneath the folders it is given, so hiding one folder (the reference
images) means granting every sibling of each folder on its path instead ("the sibling rule"):
for /root/.cache/circle-render/reference that is every entry of / but /root, every entry of
/root but .cache, and so on. A sandboxed process also cannot trace (and, from ABI 6, signal)
a process outside its sandbox. ``abi()`` is 0 where the kernel has no Landlock.
"""
from __future__ import annotations

import ctypes
import os
import resource
import struct
from pathlib import Path

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446      # the same on every architecture
_VERSION_FLAG = 1                                               # LANDLOCK_CREATE_RULESET_VERSION
_PATH_BENEATH = 1                                               # LANDLOCK_RULE_PATH_BENEATH
_PR_SET_NO_NEW_PRIVS, _PR_CAPBSET_DROP = 38, 24
_CAPS_V3 = 0x20080522                                           # _LINUX_CAPABILITY_VERSION_3

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REFER, TRUNCATE = 1 << 13, 1 << 14                              # ABI 2, ABI 3
READ = EXECUTE | READ_FILE | READ_DIR
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE       # what a rule on a file may hold
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1       # ABI 6

# Devices a worker may open for writing: the null devices, shared memory, NVIDIA's devices.
DEVICE_PATTERNS = ("null", "zero", "full", "shm", "nvidia*", "nvidia-caps", "nvidia-uvm*", "nvidiactl")


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi() -> int:
    """The kernel's Landlock ABI version; 0 where it has none (or it is switched off)."""
    try:
        v = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_VERSION_FLAG))
    except (OSError, AttributeError):
        return 0
    return max(int(v), 0)


def handled_fs(version: int) -> int:
    """Every file-system right the ABI knows but IOCTL_DEV (CUDA talks to its devices by ioctl)."""
    rights = (1 << 13) - 1
    if version >= 2:
        rights |= REFER
    if version >= 3:
        rights |= TRUNCATE
    return rights


class Ruleset:
    """A Landlock ruleset being built: ``allow(path, rights)``, then ``restrict_self()``."""

    def __init__(self, version: int):
        self.handled = handled_fs(version)
        self.scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if version >= 6 else 0
        attr = (struct.pack("<QQQ", self.handled, 0, self.scoped) if version >= 6 else
                struct.pack("<QQ", self.handled, 0) if version >= 4 else struct.pack("<Q", self.handled))
        self._libc = _libc()
        buf = ctypes.create_string_buffer(attr, len(attr))
        fd = self._libc.syscall(_CREATE_RULESET, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
        if fd < 0:
            raise self._error("landlock_create_ruleset")
        self.fd = int(fd)
        self.rules = 0

    def _error(self, what: str) -> OSError:
        errno = ctypes.get_errno()
        return OSError(errno, f"{what}: {os.strerror(errno)}")

    def allow(self, path: str | os.PathLike, rights: int) -> bool:
        """Grant ``rights`` beneath ``path`` (a folder) or on it (a file: file rights only).
        False if it cannot be opened (gone, a dangling link): nothing is granted then."""
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return False
        try:
            is_dir = os.path.isdir(f"/proc/self/fd/{fd}")
            rights &= self.handled if is_dir else (self.handled & FILE_RIGHTS)
            if not rights:
                return False
            buf = ctypes.create_string_buffer(struct.pack("<Qi", rights, fd), 12)    # packed struct
            if self._libc.syscall(_ADD_RULE, ctypes.c_int(self.fd), ctypes.c_int(_PATH_BENEATH), buf,
                                  ctypes.c_uint32(0)) < 0:
                raise self._error(f"landlock_add_rule {path}")
            self.rules += 1
            return True
        finally:
            os.close(fd)

    def restrict_self(self) -> None:
        """Apply the ruleset to this thread and what it starts later, irrevocably (with no new
        privileges: a set-user-ID program cannot lift it)."""
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise self._error("prctl(PR_SET_NO_NEW_PRIVS)")
        if self._libc.syscall(_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            raise self._error("landlock_restrict_self")
        os.close(self.fd)


def _is_within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def readable_roots(hidden: list[Path], top: Path = Path("/")) -> tuple[list[Path], list[Path]]:
    """(paths to grant reading beneath, folders on the way to a hidden one) so that everything
    but ``hidden`` (absolute, resolved) can be read: the sibling rule. Symbolic links are left
    out: what they point to is granted (or not) where it lives."""
    hidden = [Path(h) for h in hidden]
    if not hidden:
        return [top], []
    grant, on_the_way = [], []

    def walk(folder: Path) -> None:
        on_the_way.append(folder)
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            return
        for name in names:
            p = folder / name
            if p.is_symlink() or any(_is_within(p, h) for h in hidden):
                continue
            if any(_is_within(h, p) for h in hidden):
                walk(p)
            else:
                grant.append(p)

    walk(top)
    return grant, on_the_way


def device_paths() -> list[Path]:
    dev = Path("/dev")
    return sorted({p for pattern in DEVICE_PATTERNS for p in dev.glob(pattern)})


def landlock(hidden: list[str], writable: list[str], version: int) -> int:
    """Restrict this process: read and run everything but ``hidden``, write only beneath
    ``writable``, to DEVICE_PATTERNS and to this process's own /proc entries. Returns the number
    of rules."""
    rules = Ruleset(version)
    grant, on_the_way = readable_roots([Path(h) for h in hidden])
    for p in grant:
        rules.allow(p, READ)
    for p in on_the_way:
        rules.allow(p, READ_DIR)           # listing a folder on the way; its hidden entry stays unreadable
    # CUDA's driver writes to its own process's /proc entries as it starts (cudaErrorOperatingSystem
    # without this, seen on the H100); /proc/self resolves to this process alone, not its children
    own_proc = Path(f"/proc/{os.getpid()}")
    for p in [*map(Path, writable), *device_paths(), own_proc]:
        rules.allow(p, rules.handled)
    rules.restrict_self()
    return rules.rules


def drop_capabilities() -> None:
    """No capability now or after an exec (for a worker left running as root): it cannot load
    kernel modules, change clocks, trace or signal other users' processes, or ignore file
    permissions."""
    libc = _libc()
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 63
    for cap in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = struct.pack("<Ii", _CAPS_V3, 0)
    data = bytes(24)                                           # two empty {effective, permitted, inheritable}
    if libc.capset(ctypes.create_string_buffer(header, 8), ctypes.create_string_buffer(data, 24)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"capset: {os.strerror(errno)}")


def apply(spec: dict) -> dict:
    """Confine this process as ``spec`` says (from sandbox.Isolation.worker_spec); what was
    applied, for the checker's footer. Raises OSError if a step that was asked for fails."""
    done = {"landlock": 0, "rules": 0, "capabilities": "kept"}
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))           # a crash leaves no core file
    if spec.get("landlock"):
        done["rules"] = landlock(spec["hidden"], spec["writable"], int(spec["landlock"]))
        done["landlock"] = int(spec["landlock"])
    if spec.get("drop_capabilities") and os.geteuid() == 0:
        drop_capabilities()
        done["capabilities"] = "dropped"
    done["uid"] = os.geteuid()
    return done

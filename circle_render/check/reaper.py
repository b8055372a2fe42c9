"""Ending every process a worker started, wherever it went.

The checker makes itself a child subreaper (Linux's PR_SET_CHILD_SUBREAPER): a process whose
parent dies is handed to the checker instead of to init, even one that started a session of
its own or forked twice to leave its parent. So everything a worker started is either still
below the worker, or a child of the checker that the checker did not start. ``end_tree`` kills
both, over and over until none is left (a process may fork while it is being killed), and
waits for each that became the checker's child. Killing goes through pidfds where the kernel
has them, so a process id reused in the meantime is never signalled.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants; False where that is not possible."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of ``pid``, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = text[text.rfind(")") + 2:].split()       # the name in parentheses may hold anything
    try:
        return int(rest[1]), rest[0]
    except (IndexError, ValueError):
        return None


def processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process on the machine that this one can see."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _stat(int(name))
            if info is not None:
                table[int(name)] = info
    return table


def children() -> set[int]:
    """This process's children now (snapshot it before starting a worker)."""
    me = os.getpid()
    return {pid for pid, (ppid, _) in processes().items() if ppid == me}


def tree(root: int | None, known: set[int]) -> set[int]:
    """``root`` and every process below it, plus every child of this process that is not in
    ``known`` (orphans handed to us) and everything below those."""
    table = processes()
    me = os.getpid()
    below: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        below.setdefault(ppid, []).append(pid)
    start = [p for p in below.get(me, []) if p not in known]
    if root is not None and root in table:
        start.append(root)
    found, todo = set(), start
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(below.get(pid, []))
    return found


def _kill(pid: int, expected_parent: int) -> None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return
    try:
        fd = opener(pid)
    except OSError:
        return                                     # gone already
    try:
        info = _stat(pid)                          # the pidfd pins the process: is it still ours?
        if info is not None and info[0] == expected_parent:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
    finally:
        os.close(fd)


def end_tree(root: int | None, known: set[int], timeout: float = 10.0) -> list[int]:
    """Kill ``root`` (a worker) and everything it started (see ``tree``), and wait for those
    that became this process's children (not ``root`` itself: its Popen waits for it). The
    pids still alive after ``timeout`` seconds (none, almost always: a process stuck in the
    kernel can take a moment to die)."""
    me = os.getpid()
    deadline = time.monotonic() + timeout
    while True:
        table = processes()
        alive = [p for p in tree(root, known) if p in table and not (p == root and table[p][1] == "Z")]
        if not alive or time.monotonic() > deadline:
            return alive
        for pid in alive:
            ppid, state = table[pid]
            if state != "Z":
                _kill(pid, ppid)
            if pid != root and ppid == me:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
        time.sleep(0.002)

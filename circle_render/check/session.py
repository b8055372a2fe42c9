"""The checker's end of one worker process: starting it (confined as sandbox.Isolation says),
sending it commands one at a time, timing each on the checker's own clock, and ending it and
everything it started.

Every command is a round trip timed here with CLOCK_MONOTONIC_RAW (which no process, root
included, can slew), from just before the command is written to the moment its whole reply is
read. While it waits, the checker polls the reply pipe without sleeping for up to SPIN_S (then
it blocks), and so does the worker between commands: neither pays the delay of waking up, and
what the channel itself costs is measured by echoes before the renderer's code is loaded.
A reply that is not exactly what was asked (protocol.py), a worker that exits, or a deadline
passed ends the session with a reason; ``close()`` kills the worker and everything it started
(reaper.py) and closes the pipes, so nothing holds them past the check.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import mmap
import os
import secrets
import select
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from circle_render.check import reaper
from circle_render.check.protocol import ImageMeta, Message, Op, ProtocolError, Reader, clean_text, encode
from circle_render.check.sandbox import Isolation

SPIN_S = 0.25            # poll without sleeping this long before blocking (both ends)...
SPIN_CPUS = 4            # ...on a machine with at least this many CPUs for this process (else block at once)
ECHOES = 64              # round trips timed to measure the channel
QUIT_GRACE_S = 1.0       # a worker told to quit is killed after this long
COPIES = 4               # honest image copies timed (trusted code, before the renderer's)
CONFINE = Path(__file__).with_name("confine.py")

# The worker's first moments, before anything of the project or the renderer is imported:
# read the configuration, confine the process, set sys.path, then serve (worker_main.py).
BOOT = r"""
import importlib.util, json, os, signal, struct, sys
cmd, reply, shm = (int(a) for a in sys.argv[1:4])
signal.pthread_sigmask(signal.SIG_SETMASK, [])
signal.signal(signal.SIGINT, signal.SIG_IGN)
os.dup2(2, 1)
sys.stdout.reconfigure(line_buffering=True)
H = struct.Struct("<BxxxIQ")
def read(n):
    b = b""
    while len(b) < n:
        d = os.read(cmd, n - len(b))
        if not d:
            os._exit(0)
        b += d
    return b
op, length, nonce = H.unpack(read(H.size))
config = json.loads(read(length))
def fail(text):
    data = text.encode("utf-8", "replace")[:4000]
    os.write(reply, H.pack(17, len(data), nonce) + data)
    os._exit(1)
try:
    spec = importlib.util.spec_from_file_location("_circle_render_confine", config["confine"])
    confine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(confine)
    applied = confine.apply(config["sandbox"])
except Exception as e:
    fail("the worker could not be confined: %s: %s" % (type(e).__name__, e))
sys.path[:] = config["sys_path"]
sys.dont_write_bytecode = bool(config["sandbox"])
try:
    from circle_render.check.worker_main import serve
except BaseException as e:
    fail("the worker could not start: %s: %s" % (type(e).__name__, e))
serve(config, cmd, reply, shm, nonce, applied)
"""


T = TypeVar("T")


def spin_seconds() -> float:
    """How long both ends poll without sleeping: SPIN_S, or 0 where two spinning processes
    would take the CPUs a renderer needs."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return SPIN_S if cpus >= SPIN_CPUS else 0.0


def clock_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)


class WorkerError(Exception):
    """The worker did not do what was asked: ``reason`` (one line), ``log`` (its traceback)."""

    def __init__(self, reason: str, log: str = ""):
        super().__init__(reason)
        self.reason, self.log = reason, log


class WorkerTimeout(WorkerError):
    """The deadline passed before the worker answered."""


def exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        crash = " (a crash in native code, e.g. a CUDA illegal memory access)" if name in (
            "SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE") else ""
        return f"the renderer's process was killed by {name}{crash}"
    return f"the renderer's process exited with code {code} before it finished"


@dataclass(frozen=True)
class Channel:
    """What the channel costs, measured by trusted code before the renderer's is loaded:
    the median echo round trip, and the fastest honest copy of an image of the check's size
    (a round trip too)."""
    echo_ns: int
    copy_ns: int


@dataclass
class Picture:
    """What get_image() returned: its description, and a private copy of its pixels when it is
    a float32 array of the check's shape (None otherwise)."""
    meta: ImageMeta
    pixels: np.ndarray | None


def _sealed_memory(nbytes: int) -> int:
    """A memory file of ``nbytes`` that neither end can resize (a worker that shrank it would
    crash the checker with SIGBUS on its next read)."""
    fd = os.memfd_create("circle-render-image", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, nbytes)
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
    return fd


def _start_with_signals_held(start: Callable[[], T]) -> T:
    """Run ``start()`` (which forks) with SIGINT, SIGTERM and SIGHUP held back: a Ctrl-C
    arriving then is delivered right after, when the new process is known and can be ended."""
    held = {s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None}
    try:
        before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    except (AttributeError, ValueError):
        return start()
    try:
        return start()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class WorkerSession:
    """One worker process running renderer ``spec``, for images of ``size`` x ``size``."""

    def __init__(self, spec: str, isolation: Isolation, size: int, gpu: bool):
        self.spec, self.isolation, self.size, self.gpu = spec, isolation, size, gpu
        self.process: subprocess.Popen[bytes] | None = None
        self.channel: Channel | None = None
        self.name, self.needs_gpu = spec, False
        self.returncode: int | None = None
        self._fds: list[int] = []
        self._known = reaper.children()
        self.spin = spin_seconds()

    # ------------------------------------------------------------ start and end

    def start(self, deadline: float) -> dict:
        """Start the worker and wait until it is confined; what it applied (sandbox)."""
        shape = (self.size, self.size, 4)
        nbytes = int(np.prod(shape)) * 4
        shm = _sealed_memory(nbytes)
        cmd_r, self.cmd_w = os.pipe()
        self.reply_r, reply_w = os.pipe()
        self._fds = [shm, cmd_r, self.cmd_w, self.reply_r, reply_w]
        self.view = np.frombuffer(mmap.mmap(shm, nbytes, mmap.MAP_SHARED, mmap.PROT_READ), np.float32).reshape(shape)
        iso = self.isolation
        ids: dict[str, Any] = {"user": iso.uid, "group": iso.gid, "extra_groups": []} if iso.uid is not None else {}
        package_root = str(Path(__file__).resolve().parents[2])
        self._known = reaper.children()
        self.process = process = _start_with_signals_held(lambda: subprocess.Popen(
            [sys.executable, "-I", "-c", BOOT, str(cmd_r), str(reply_w), str(shm)],
            pass_fds=(cmd_r, reply_w, shm), stdin=subprocess.DEVNULL, env=iso.environment(),
            start_new_session=True, **ids))
        for fd in (cmd_r, reply_w, shm):               # the worker's now: ours would keep them open
            os.close(fd)
            self._fds.remove(fd)
        self._pidfd = None
        with contextlib.suppress(AttributeError, OSError):
            self._pidfd = os.pidfd_open(process.pid)
            self._fds.append(self._pidfd)
        self.poller = select.poll()
        self.poller.register(self.reply_r, select.POLLIN)
        if self._pidfd is not None:
            self.poller.register(self._pidfd, select.POLLIN)
        sys_path = list(dict.fromkeys([package_root, *(os.getcwd() if p == "" else p for p in sys.path)]))
        config = {"confine": str(CONFINE), "sandbox": iso.worker_spec(), "sys_path": sys_path,
                  "size": self.size, "gpu": self.gpu, "spin": self.spin}
        reply, _ = self.request(Op.HELLO, json.dumps(config).encode(), deadline)
        try:
            applied = json.loads(reply.payload[:4096])
        except ValueError:
            applied = {}
        return applied if isinstance(applied, dict) else {}

    def close(self) -> list[int]:
        """End the worker and everything it started; close the pipes. The pids that would not
        end (none, almost always)."""
        left: list[int] = []
        if self.process is not None:
            if self.process.poll() is None:
                with contextlib.suppress(OSError):
                    os.write(self.cmd_w, encode(Op.QUIT, 0))
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=QUIT_GRACE_S)      # a clean exit flushes its prints
            left = reaper.end_tree(self.process.pid, self._known)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=10)
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds = []
        return left

    # ------------------------------------------------------------ one command

    def _read_available(self, reader: Reader) -> Message | None:
        while True:
            try:
                data = os.read(self.reply_r, 1 << 16)
            except BlockingIOError:
                return None
            if not data:
                raise EOFError
            msg = reader.feed(data)
            if msg is not None:
                return msg
            if not select.select([self.reply_r], [], [], 0)[0]:
                return None

    @property
    def _proc(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            raise RuntimeError("the worker was not started")
        return self.process

    def _died(self) -> WorkerError:
        """The worker's exit, as a reason (or, if it lives on, its closing of the channel)."""
        try:
            code = self._proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return WorkerError("the renderer's process broke the check's protocol: it closed the "
                               "check's channel")
        self.returncode = code
        return WorkerError(exit_reason(code))

    def request(self, op: int, payload: bytes, deadline: float) -> tuple[Message, int]:
        """Send one command and wait for its reply: (the reply, the round trip in ns).
        WorkerError if the worker failed, broke the protocol, exited, or the deadline passed."""
        if select.select([self.reply_r], [], [], 0)[0]:            # nothing may come unasked
            try:
                stray = os.read(self.reply_r, 1 << 16)
            except OSError:
                stray = b""
            if stray:
                raise WorkerError("the renderer's process broke the check's protocol: it wrote to the "
                                  "check's channel out of turn")
            if self._proc.poll() is not None:
                raise self._died()
        nonce = secrets.randbits(64)
        reader = Reader(op, nonce)
        message = encode(op, nonce, payload)
        os.set_blocking(self.reply_r, False)
        start = clock_ns()
        try:
            os.write(self.cmd_w, message)
        except BrokenPipeError:
            raise self._died() from None
        spin_until = time.monotonic() + self.spin
        try:
            while True:
                now = time.monotonic()
                if now < spin_until:
                    ready = self.poller.poll(0)
                else:
                    ready = self.poller.poll(max(1, min(1000, int((deadline - now) * 1000) + 1)))
                if ready:
                    msg = self._read_available(reader)
                    if msg is not None:
                        elapsed = clock_ns() - start
                        break
                    exited = any(fd == self._pidfd for fd, _ in ready) or self._proc.poll() is not None
                    if exited and not select.select([self.reply_r], [], [], 0)[0]:
                        raise self._died()
                elif now >= spin_until and self._proc.poll() is not None:
                    raise self._died()
                if time.monotonic() > deadline:
                    raise WorkerTimeout("timed out")
        except EOFError:
            raise self._died() from None
        except ProtocolError as e:
            raise WorkerError(f"the renderer's process broke the check's protocol: it {e}") from None
        if msg.op == Op.FAIL:
            text = msg.text()
            reason, _, log = text.partition("\n")
            raise WorkerError(reason or "the renderer failed", log)
        return msg, elapsed

    # ------------------------------------------------------------ the commands

    def calibrate(self, deadline: float) -> Channel:
        """Time the channel and the honest copy (trusted code only has run so far)."""
        echoes = [self.request(Op.ECHO, b"", deadline)[1] for _ in range(ECHOES)]
        self.request(Op.COPYTEST, b"", deadline)                 # first touch, CUDA's start
        copies = [self.request(Op.COPYTEST, b"", deadline)[1] for _ in range(COPIES)]
        self.channel = Channel(int(statistics.median(echoes[ECHOES // 4:])), min(copies))
        return self.channel

    def load_class(self, deadline: float) -> tuple[str, bool]:
        """Import the renderer's class in the worker: (its display name, needs_gpu)."""
        reply, _ = self.request(Op.CLASS, self.spec.encode(), deadline)
        if not reply.payload:
            raise WorkerError("the renderer's process broke the check's protocol: it sent an empty class description")
        self.needs_gpu = bool(reply.payload[0] & 1)
        self.name = clean_text(reply.payload[1:], 64).replace("\n", " ") or self.spec
        return self.name, self.needs_gpu

    def load(self, scene: str, seed: int, deadline: float) -> None:
        self.request(Op.LOAD, json.dumps({"scene": scene, "seed": seed}).encode(), deadline)

    def frame(self, deadline: float) -> int:
        """One frame (clear, advance, render, each with a synchronize): its round trip, ns."""
        return self.request(Op.FRAME, b"", deadline)[1]

    def image(self, deadline: float) -> tuple[int, ImageMeta]:
        """get_image() into the shared memory: (its round trip in ns, its description)."""
        reply, ns = self.request(Op.IMAGE, b"", deadline)
        try:
            return ns, ImageMeta.decode(reply.payload)
        except ProtocolError as e:
            raise WorkerError(f"the renderer's process broke the check's protocol: it {e}") from None

    def picture(self, meta: ImageMeta) -> Picture:
        """A private copy of the shared image (the worker may change the shared one any time)."""
        ok = meta.is_array and meta.shape == self.view.shape and meta.is_float32()
        return Picture(meta, np.array(self.view) if ok else None)

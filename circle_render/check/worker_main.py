"""The worker process of ``render check``: it runs one renderer, one command at a time, as the
checker asks (protocol.py), and measures nothing: every time that scores is taken by the
checker, on its own clock, around each command.

It starts from ``BOOT`` (session.py), which reads its configuration, confines the process
(confine.py) and sets ``sys.path`` before anything else is imported; ``serve`` then answers the
trusted commands (echoes and the honest image copy, by which the checker measures the channel)
before the renderer's code is imported, and the renderer's commands after.
"""
from __future__ import annotations

import json
import mmap
import os
import select
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from circle_render.check.protocol import HEADER, MAX_TEXT, ImageMeta, Op, encode


class Commands:
    """The command pipe: whole messages, read by polling for SPIN_S, then by blocking."""

    def __init__(self, fd: int):
        self.fd = fd
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)
        self.buf = bytearray()

    def _wait(self, spin_until: float) -> None:
        import time
        while time.monotonic() < spin_until:
            if self.poller.poll(0):
                return
        self.poller.poll()

    def read(self, spin_until: float) -> tuple[int, int, bytes] | None:
        """(operation, nonce, payload) of the next command; None when the checker is gone."""
        while True:
            if len(self.buf) >= HEADER.size:
                op, length, nonce = HEADER.unpack_from(self.buf)
                if len(self.buf) >= HEADER.size + length:
                    payload = bytes(self.buf[HEADER.size:HEADER.size + length])
                    del self.buf[:HEADER.size + length]
                    return op, nonce, payload
            self._wait(spin_until)
            data = os.read(self.fd, 1 << 16)
            if not data:
                return None
            self.buf += data


def _send(fd: int, op: int, nonce: int, payload: bytes = b"") -> None:
    data = memoryview(encode(op, nonce, payload))
    while data:
        data = data[os.write(fd, data):]


def failure_text(e: BaseException) -> str:
    """"reason\\ntraceback" for a FAIL reply."""
    if isinstance(e, SystemExit):
        reason = f"the renderer called sys.exit({e.code!r})"
    elif isinstance(e, KeyboardInterrupt):
        reason = "the renderer raised KeyboardInterrupt"
    else:
        reason = f"{type(e).__name__}: {e}".rstrip(": ")
    trace = traceback.format_exc()
    return (reason.replace("\n", " ")[:2000] + "\n" + trace)[:MAX_TEXT - 16]


def keep_the_heap() -> None:
    """glibc: serve large blocks from the heap and never give freed memory back, so that a
    get_image() result (16 MiB at 1024) lands in pages already touched, the first call after a
    load as the second: no page faults that would look like work put off (check/timing.py).
    Elsewhere nothing is changed."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-4, 0)                   # M_MMAP_MAX: no block of its own for a large allocation
        libc.mallopt(-1, 2**31 - 1)           # M_TRIM_THRESHOLD: keep freed memory
    except (OSError, AttributeError):
        pass


def _synchronize(renderer: Any) -> None:
    sync = getattr(renderer, "synchronize", None)
    if sync is not None:
        sync()


class Worker:
    """One renderer class, a fresh instance per LOAD, and the shared image memory."""

    def __init__(self, config: dict, shm_fd: int):
        self.size = int(config["size"])
        self.gpu = bool(config.get("gpu"))
        shape = (self.size, self.size, 4)
        self.shm = mmap.mmap(shm_fd, int(np.prod(shape)) * 4, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.view = np.frombuffer(self.shm, np.float32).reshape(shape)
        self.factory: Callable[[], Any] | None = None
        self.renderer: Any = None
        self.blank: Any = None                    # a CuPy or NumPy array: the honest copy's source
        self.scenes: dict = {}                    # (scene, seed) -> Scene: made once (snowsingle takes seconds)

    def copytest(self) -> bytes:
        """The honest copy of an image of this size, by trusted code: from the GPU as a CuPy
        array's get() where a GPU is used, else from host memory; into the shared memory."""
        if self.blank is None:
            if self.gpu:
                import cupy as cp
                self.blank = cp.zeros(self.view.shape, cp.float32)
            else:
                self.blank = np.zeros(self.view.shape, np.float32)
        self._touch()
        host = self.blank.get() if self.gpu else self.blank
        np.copyto(self.view, host)
        return b""

    def _touch(self) -> None:
        """Touch the block an image of this size will likely get (so no page faults fall in a
        timed call); IMAGE and COPYTEST both do it, so the honest copy costs what an honest
        get_image() round trip costs (without it the cap of check/timing.py sat below every
        honest get_image(): 2.7-3.6 against 4.8-6.5 ms on the H100, an excess charged to every
        frame)."""
        np.empty(self.view.shape, np.float32).fill(0)

    def load_class(self, spec: str) -> bytes:
        from circle_render import registry
        from circle_render.user_class import load_class
        if registry.is_user_spec(spec):
            cls, name = load_class(spec)
            self.factory = cls
            needs_gpu = bool(getattr(cls, "needs_gpu", False))
        else:
            name = registry.resolve(spec)
            registry.create(name)                  # a missing GPU: say so now
            self.factory = lambda: registry.create(name)
            needs_gpu = registry.RENDERERS[name].needs_gpu
        return bytes([int(needs_gpu)]) + name.encode("utf-8", "replace")[:256]

    def load(self, payload: bytes) -> bytes:
        from circle_render.scenes import make_scene
        job = json.loads(payload)
        self.renderer = None
        key = (str(job["scene"]), int(job["seed"]))
        if key not in self.scenes:
            self.scenes = {k: v for k, v in self.scenes.items() if k[0] == key[0]}     # a scene's seeds only
            self.scenes[key] = make_scene(*key)
        if self.factory is None:
            raise RuntimeError("LOAD before CLASS")
        r = self.factory()
        r.load(self.scenes[key].copy(), self.size, self.size)
        _synchronize(r)
        self.renderer = r
        return b""

    def frame(self) -> bytes:
        """The course's frame: clear, advance, render, each followed by a synchronize."""
        r = self.renderer
        r.clear()
        _synchronize(r)
        r.advance()
        _synchronize(r)
        r.render()
        _synchronize(r)
        return b""

    def image(self) -> bytes:
        self._touch()
        img = self.renderer.get_image()
        if not isinstance(img, np.ndarray):
            return ImageMeta(False, type_name=type(img).__name__).encode()
        meta = ImageMeta(True, img.dtype.str, tuple(int(d) for d in img.shape))
        if img.dtype == np.float32 and img.shape == self.view.shape:
            np.copyto(self.view, img)
        return meta.encode()


def serve(config: dict, cmd_fd: int, reply_fd: int, shm_fd: int, hello_nonce: int, applied: dict) -> None:
    """Answer commands until QUIT or the checker goes away."""
    import time
    keep_the_heap()
    worker = Worker(config, shm_fd)
    _send(reply_fd, Op.OK, hello_nonce, json.dumps(applied).encode())
    commands = Commands(cmd_fd)
    handlers: dict[int, Callable[[bytes], bytes]] = {
        Op.COPYTEST: lambda p: worker.copytest(), Op.CLASS: lambda p: worker.load_class(p.decode()),
        Op.LOAD: worker.load, Op.FRAME: lambda p: worker.frame(), Op.IMAGE: lambda p: worker.image()}
    replies: dict[int, int] = {Op.CLASS: Op.INFO, Op.IMAGE: Op.PICTURE}
    spin = float(config.get("spin", 0.0))            # after a reply, poll without sleeping this long
    spin_until = time.monotonic() + spin
    while True:
        command = commands.read(spin_until)
        if command is None or command[0] == Op.QUIT:
            return
        op, nonce, payload = command
        if op == Op.ECHO:
            _send(reply_fd, Op.OK, nonce)
        elif op in handlers:
            try:
                answer = handlers[op](payload)
                _send(reply_fd, replies.get(op, Op.OK), nonce, answer)
            except BaseException as e:                # noqa: BLE001 (a renderer's sys.exit too)
                _send(reply_fd, Op.FAIL, nonce, failure_text(e).encode("utf-8", "replace")[:MAX_TEXT])
        spin_until = time.monotonic() + spin

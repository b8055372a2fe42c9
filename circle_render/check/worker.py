"""Running a renderer on one scene for ``render check``: frame 0 at each correctness seed, then
the course's timing. Built-in renderers run in this process; a user's class runs in a fresh
worker process (spawned, so nothing of a crashed CUDA context or a monkeypatch survives it)
with a time limit. A crash, hang, ``sys.exit``, KeyboardInterrupt or anything else there fails
that scene only, with the reason. The worker sends back only numbers, text and raw image bytes
(never pickles): the caller checks the images itself.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

from circle_render.scenes import make_scene
from circle_render.timing.frames import course_time, synchronize


@dataclass
class SceneRun:
    images: dict = field(default_factory=dict)     # seed -> what get_image() returned, frame 0
    runs_ms: list = field(default_factory=list)    # each run's per-frame Total
    failure: str | None = None                     # why the renderer did not finish
    log: list = field(default_factory=list)


class NotAnArray:
    """Stands for a get_image() result that is not a NumPy array (only its type travels)."""

    def __init__(self, type_name: str):
        self.type_name = type_name


def render_and_time(factory, scene: str, size: int, check_seeds: list[int], time_seed: int,
                    runs: int, progress, catch=Exception) -> SceneRun:
    """Frame 0 of ``scene`` at each of ``check_seeds`` (a fresh renderer each), then ``runs``
    course timings at ``time_seed``. Stops at the first exception of type ``catch``."""
    out = SceneRun()
    try:
        for seed in check_seeds:
            r = factory()
            r.load(make_scene(scene, seed), size, size)
            r.clear()
            r.advance()
            r.render()
            synchronize(r)
            img = r.get_image()
            out.images[seed] = np.asarray(img) if isinstance(img, np.ndarray) else NotAnArray(type(img).__name__)
        for k in range(runs):
            progress(f"run {k + 1}/{runs}")
            _, totals = course_time(factory, make_scene(scene, time_seed), size, runs=1)
            out.runs_ms += totals
    except catch as e:           # noqa: B030 (catch is an exception class)
        out.failure = f"{type(e).__name__}: {e}".rstrip(": ")
        if isinstance(e, SystemExit):
            out.failure = f"the renderer called sys.exit({e.code!r})"
        elif isinstance(e, KeyboardInterrupt):
            out.failure = "the renderer raised KeyboardInterrupt"
        out.log.append("the renderer failed:\n" + traceback.format_exc())
    return out


def run_scene(renderer, scene: str, size: int, check_seeds: list[int], time_seed: int, runs: int,
              progress, timeout: float) -> SceneRun:
    """render_and_time() for a renderer from plugins.load_renderer(): in this process for a
    built-in one, else in a worker process stopped after ``timeout`` seconds."""
    if not renderer.isolated:
        return render_and_time(renderer.factory, scene, size, check_seeds, time_seed, runs, progress)
    return _run_in_worker(renderer.spec, scene, size, check_seeds, time_seed, runs, progress, timeout)


# ---------------------------------------------------------------- the worker process

def _send_json(conn, obj) -> None:
    conn.send_bytes(json.dumps(obj).encode())


def _worker_main(spec, scene, size, check_seeds, time_seed, runs, conn) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the user's Ctrl-C is the parent's to handle
    os.dup2(2, 1)                                   # the renderer's prints stay off the table
    try:
        from circle_render.check.plugins import renderer_factory
        factory, _ = renderer_factory(spec)
        run = render_and_time(factory, scene, size, check_seeds, time_seed, runs,
                              lambda text: _send_json(conn, {"progress": text}), catch=BaseException)
    except BaseException as e:                      # loading failed here though it worked in the parent
        run = SceneRun(failure=f"{type(e).__name__}: {e}", log=[traceback.format_exc()])
    images = {}
    for seed, img in run.images.items():
        images[str(seed)] = ({"type": img.type_name} if isinstance(img, NotAnArray) else
                             {"dtype": img.dtype.str, "shape": list(img.shape)})
    _send_json(conn, {"failure": run.failure, "runs_ms": run.runs_ms, "log": run.log, "images": images})
    for img in run.images.values():
        if not isinstance(img, NotAnArray):
            conn.send_bytes(np.ascontiguousarray(img).tobytes())
    conn.close()


def _receive_images(conn, meta: dict) -> dict:
    images = {}
    for seed, m in meta.items():
        if "type" in m:
            images[int(seed)] = NotAnArray(str(m["type"]))
            continue
        dtype = np.dtype(m["dtype"])
        if dtype.hasobject:
            raise ValueError("an object array")
        images[int(seed)] = np.frombuffer(conn.recv_bytes(), dtype=dtype).reshape(m["shape"])
    return images


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        crash = " (a crash in native code, e.g. a CUDA illegal memory access)" if name in (
            "SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE") else ""
        return f"the renderer's process was killed by {name}{crash}"
    return f"the renderer's process exited with code {code} before it finished"


def _stop(process) -> None:
    if process.is_alive():
        process.terminate()
        process.join(2)
    if process.is_alive():
        process.kill()
    process.join()


def _start_without_ctrl_c(process) -> None:
    """Start the worker with Ctrl-C held back until it has its whole start-up data: no
    half-started child printing a traceback. SIGINT is blocked in this thread (the worker
    inherits the block, so the user's Ctrl-C stays this process's to handle) and deferred by a
    handler (another thread, numba's say, may be the one that receives it)."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        process.start()
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda *args: caught.append(args))
    block = getattr(signal, "pthread_sigmask", None)          # POSIX only
    mask = block(signal.SIG_BLOCK, {signal.SIGINT}) if block else None
    try:
        process.start()
    finally:
        if block:
            block(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, previous)
    if caught:                                   # the user's Ctrl-C: no worker left behind
        _stop(process)
        raise KeyboardInterrupt


def _run_in_worker(spec, scene, size, check_seeds, time_seed, runs, progress, timeout) -> SceneRun:
    ctx = multiprocessing.get_context("spawn")
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=_worker_main,
                          args=(spec, scene, size, check_seeds, time_seed, runs, send))
    _start_without_ctrl_c(process)
    send.close()
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return SceneRun(failure=f"timed out after {timeout:g} s (--scene-timeout)")
            if not receive.poll(min(left, 1.0)):
                continue
            try:
                msg = json.loads(receive.recv_bytes())
                if "progress" in msg:
                    progress(str(msg["progress"]))
                    continue
                return SceneRun(images=_receive_images(receive, msg["images"]),
                                runs_ms=[float(t) for t in msg["runs_ms"]],
                                failure=msg["failure"], log=[str(x) for x in msg["log"]])
            except (EOFError, OSError):
                break                                # it died: say how, below
            except (ValueError, KeyError, TypeError) as e:
                return SceneRun(failure=f"the renderer's process sent back something unreadable ({e})")
    finally:
        _stop(process)
        receive.close()
    return SceneRun(failure=_exit_reason(process.exitcode))

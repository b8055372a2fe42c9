"""``render saxpy``, ``render scan`` and ``render check scan|find_repeats``: the assignment's
warm-up programs, timed the course's way (the kernels: circle_render/cuda/primitives.py)."""
from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click
import numpy as np

from circle_render.course import SCAN_SIZES, scan_score, scan_table, stored_times
from circle_render.errors import UserError
from circle_render.gpu import gpu_name, require_gpu
from circle_render.timing.timer import event_times, wall_times


def make_input(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """The course's inputs: "random" (values 0..9) or "ones", int32."""
    if kind == "ones":
        return np.ones(n, dtype=np.int32)
    return np.random.default_rng(seed).integers(0, 10, n, dtype=np.int32)


def event_ms(step: Callable[[], object], runs: int = 3, warmup: int = 1,
             before: Callable[[], object] | None = None) -> float:
    """Min over ``runs`` of the CUDA-event time (ms) of ``step()`` (circle_render.timing.timer.event_times)."""
    return event_times(step, runs, warmup=warmup, before=before).min


def copy_gbps(nbytes: int, runs: int = 5) -> float:
    """Device-to-device copy bandwidth (GB/s, read + write counted) of ``nbytes``."""
    import cupy as cp
    src, dst = cp.empty(nbytes // 4, np.float32), cp.empty(nbytes // 4, np.float32)
    stream = cp.cuda.get_current_stream().ptr
    ms = event_ms(lambda: cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                                      cp.cuda.runtime.memcpyDeviceToDevice, stream),
                  runs=runs)
    return 2 * src.nbytes / ms / 1e6


def cub_scan(x: Any) -> Any:
    """CuPy's CUB inclusive sum (the same work as an exclusive scan), for comparison. It scans
    ``x`` in place."""
    from cupy.cuda import cub
    return cub.cub_scan(x, cub.CUPY_CUB_CUMSUM)


# ---------------------------------------------------------------- saxpy

def saxpy_report(n: int) -> dict[str, Any]:
    """The course's SAXPY timing (upload + kernel + download, allocation excluded), the kernel
    alone, and the copy bandwidth of the same bytes; times in ms, bandwidths in GB/s."""
    import cupy as cp

    from circle_render.cuda.primitives import saxpy
    from circle_render.twins.saxpy import saxpy_f32
    rng = np.random.default_rng(0)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    a = np.float32(2.0)
    dx, dy, dout = cp.empty(n, np.float32), cp.empty(n, np.float32), cp.empty(n, np.float32)
    host_out = np.empty(n, np.float32)
    saxpy(a, dx, dy, dout)                            # compile and warm up
    def overall() -> None:                            # the copy back waits for the kernel
        dx.set(x)
        dy.set(y)
        saxpy(a, dx, dy, dout)
        dout.get(out=host_out)
    best = wall_times(overall, 3, before=cp.cuda.Device().synchronize).min
    kernel = event_ms(lambda: saxpy(a, dx, dy, dout), runs=5)
    bytes_moved = 3 * 4 * n
    correct = bool(np.array_equal(host_out, saxpy_f32(a, x, y)))
    return {"n": n, "overall_ms": best, "overall_gbps": bytes_moved / best / 1e6,
            "kernel_ms": kernel, "kernel_gbps": bytes_moved / kernel / 1e6,
            "copy_gbps": copy_gbps(2 * 4 * n), "correct": correct}


# ---------------------------------------------------------------- scan and find_repeats

def run_primitive(mode: str, x_host: np.ndarray, runs: int = 3, use_cub: bool = False) -> tuple[float, int | None]:
    """(device ms, first wrong index or None) of one scan or find_repeats over ``x_host``."""
    import cupy as cp

    from circle_render.cuda.primitives import exclusive_scan, find_repeats
    from circle_render.twins.scan import exclusive_scan_i32, find_repeats_i32
    x = cp.asarray(x_host)
    if mode == "scan":
        # CUB scans in place: the first call is checked, the timed ones rescan its output
        fn = (lambda: cub_scan(x)) if use_cub else (lambda: exclusive_scan(x))
        got = cp.asnumpy(fn())
        want = np.cumsum(x_host, dtype=np.int32) if use_cub else exclusive_scan_i32(x_host)
    else:
        fn = lambda: find_repeats(x)
        got = cp.asnumpy(fn()[0])
        want = find_repeats_i32(x_host)
    ms = event_ms(fn, runs=runs)
    if got.shape != want.shape:
        return ms, min(got.size, want.size)
    wrong = np.flatnonzero(got != want)
    return ms, (int(wrong[0]) if wrong.size else None)


def check_primitive(mode: str, rules: str, runs: int = 3, seed: int = 0) -> int:
    """``render check scan|find_repeats``: the course's table against the stored H100 times.
    Returns the exit code (1 if any size was wrong)."""
    require_gpu(f"render check {mode}")
    gpu = gpu_name()
    own = stored_times(gpu, mode) if gpu else None
    table = own or stored_times("NVIDIA H100 80GB HBM3", mode) or {}
    source = gpu if own else "NVIDIA H100 80GB HBM3 (no stored times for this GPU)"
    rows = []
    for n in SCAN_SIZES[rules]:
        click.echo(f"check {mode}: {n} elements", err=True)
        ms, wrong = run_primitive(mode, make_input("random", n, seed), runs)
        tref = table[str(n)]
        rows.append({"size": n, "tref": tref, "t": ms, "correct": wrong is None,
                     "score": scan_score(wrong is None, ms, tref)})
    title = "Scan" if mode == "scan" else "Find_repeats"
    click.echo(scan_table(title, rows))
    click.echo(f"Ref Time: the course's reference on the {source}, ms; random input (0..9), "
               f"min of {runs} runs")
    return 0 if all(r["correct"] for r in rows) else 1


def saxpy_command(n: int) -> None:
    """``render saxpy``: the course's line, the kernel alone, and a copy's bandwidth."""
    require_gpu("render saxpy")
    r = saxpy_report(n)
    click.echo(f"Effective BW by CUDA saxpy: {r['overall_ms']:.3f} ms\t\t[{r['overall_gbps']:.3f} GB/s]")
    click.echo(f"Kernel only:                {r['kernel_ms']:.3f} ms\t\t[{r['kernel_gbps']:.3f} GB/s] "
               f"= {100 * r['kernel_gbps'] / r['copy_gbps']:.0f}% of a device-to-device copy "
               f"({r['copy_gbps']:.1f} GB/s)")
    if not r["correct"]:
        click.echo("saxpy: the result differs from NumPy's float32 a*x + y", err=True)
        sys.exit(1)


def scan_command(mode: str, kind: str, n: int, cub: bool, seed: int | None) -> None:
    """``render scan``: device time of one scan or find_repeats, checked against NumPy."""
    if cub and mode != "scan":
        raise UserError("--cub times CuPy's scan; it has no find_repeats (use -m scan)")
    if seed is not None and kind != "random":
        raise UserError(f"-S/--seed picks random input; -i {kind} has none (drop -S or use -i random)")
    require_gpu("render scan")
    ms, wrong = run_primitive(mode, make_input(kind, n, seed or 0), use_cub=cub)
    what = "CUB scan" if cub else mode
    click.echo(f"GPU_time: {ms:.3f} ms  ({what}, {n} elements, {kind} input; "
               f"{2 * 4 * n / ms / 1e6 if ms > 0 else 0:.1f} GB/s of int32 read + written)")
    label = "Scan" if mode == "scan" else "Find_repeats"
    if wrong is None:
        click.echo(f"{label} outputs are correct!")
    else:
        click.echo(f"{label} outputs are WRONG: first wrong element at index {wrong}")
        sys.exit(1)

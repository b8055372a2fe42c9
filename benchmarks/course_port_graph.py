"""The handout's launch-cost lesson (docs/assignment.md, "Launch cost"), in one GPU run:
- what each kind of call a ported frame makes costs the host from Python: a kernel launch, the
  CuPy calls that replace thrust (fill, cumsum, subtract, argsort, take), a host read of one
  value (int(x[-1]): a sync and a copy), a cudaDeviceSynchronize, a graph replay;
- the course-style ports of examples/course_port timed the course's way (per-frame Total over
  frames 0:4, min of 3 runs, 1024 x 1024) with render() launched from Python and replayed as
  one CUDA graph, on rgb and pattern (and any --scenes);
- which CuPy calls a stream capture takes (each tried alone on a capturing stream).

    python -m benchmarks course-ports -o graph.json
"""
import argparse
import importlib.util
import json
from pathlib import Path

import numpy as np

from circle_render.gpu import gpu_name
from circle_render.scenes import make_scene
from circle_render.timing.bench import current_commit
from circle_render.timing.frames import course_time

ROOT = Path(__file__).resolve().parent.parent


def ports():
    spec = importlib.util.spec_from_file_location("course_ports", ROOT / "examples" / "course_port" / "course_ports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scaffold(graph: bool):
    spec = importlib.util.spec_from_file_location("my_renderer", ROOT / "assignment" / "my_renderer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return type("Scaffold", (module.StudentRenderer,), {"use_graph": graph})


def capture_probe() -> dict:
    """Each CuPy call alone on a capturing stream: 'captured' or the error it raised."""
    import cupy as cp

    from circle_render.cuda.student import CapturedRender
    a = cp.random.default_rng(0).integers(0, 100, 1 << 16).astype(np.int32)
    out, order = cp.empty_like(a), cp.argsort(a)
    kernel = cp.RawKernel('extern "C" __global__ void k(int* a) { a[threadIdx.x] += 1; }', "k")
    calls = {
        "a raw kernel": lambda: kernel((1,), (32,), (out,)),
        "ndarray.fill": lambda: out.fill(3),
        "cupy.cumsum(out=)": lambda: cp.cumsum(a, out=out),
        "cupy.subtract(out=)": lambda: cp.subtract(a, a, out=out),
        "cupy.take(out=)": lambda: cp.take(a, order, out=out),
        "cupy.argsort (allocates)": lambda: cp.argsort(a),
        "cupy.searchsorted": lambda: cp.searchsorted(a, a),
        "cupy.nonzero": lambda: cp.nonzero(a),
        "ndarray.get()": lambda: a.get(),
        "int(device scalar)": lambda: int(a[0]),
    }
    result = {}
    for name, call in calls.items():
        call()                              # once uncaptured: CuPy compiles its kernels first
        cp.cuda.runtime.deviceSynchronize()
        try:
            CapturedRender(call)()
            cp.cuda.runtime.deviceSynchronize()
            result[name] = "captured"
        except Exception as e:              # noqa: BLE001 - the error is the finding
            result[name] = " ".join(str(e.__cause__ or e).split())[:200]
    return result


def call_costs(n: int = 10_000, calls: int = 200) -> dict:
    """Host microseconds per call, the GPU otherwise idle: enqueued ``calls`` times back to back
    (one synchronize at the end, spread over them), or one call and its wait for a host read."""
    import cupy as cp

    from circle_render.cuda.module import Graph, Launch
    from circle_render.timing.timer import wall_times
    rng = cp.random.default_rng(0)
    a = rng.integers(0, 100, n).astype(np.int32)
    b, c, order = cp.empty_like(a), cp.empty_like(a), cp.argsort(a)
    kernel = cp.RawKernel('extern "C" __global__ void k(int* a, int n) { if (threadIdx.x == 0 && n < 0) a[0] = 1; }',
                          "k")
    launch = Launch(kernel, (1,), (32,), (b, np.int32(n)))
    graph = Graph([launch] * 12)
    sync = cp.cuda.runtime.deviceSynchronize
    queued = {
        "a raw kernel launch (CuPy)": lambda: kernel((1,), (32,), (b, np.int32(n))),
        "a prepared Launch (module.Launch)": launch,
        "ndarray.fill": lambda: b.fill(0),
        "cupy.cumsum(out=)": lambda: cp.cumsum(a, out=b),
        "cupy.subtract(out=)": lambda: cp.subtract(a, b, out=c),
        "cupy.argsort": lambda: cp.argsort(a),
        "cupy.take(out=)": lambda: cp.take(a, order, out=c),
        "a graph of 12 launches, replayed": graph,
    }
    out = {}
    for name, call in queued.items():
        call()
        sync()
        t = wall_times(lambda call=call: [call() for _ in range(calls)], runs=5, sync=sync).min
        out[name] = 1e3 * t / calls
    waits = {"int(x[-1]) (a host read: sync and copy)": lambda: int(a[-1]),
             "cudaDeviceSynchronize() (nothing queued)": sync,
             "a kernel launch, then synchronize": lambda: (launch(), sync())}
    for name, call in waits.items():
        call()
        out[name] = 1e3 * wall_times(call, runs=200).min
    return {k: round(v, 2) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--scenes", default="rgb,pattern")
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    p = ports()
    costs = call_costs()
    for name, us in costs.items():
        print(f"call {name}: {us:.2f} us", flush=True)
    renderers = {"tiled-scan": (p.TiledScanRenderer, type("G", (p.TiledScanRenderer,), {"use_graph": True})),
                 "sort-by-tile": (type("P", (p.SortByTileRenderer,), {"graph_still": False}), p.SortByTileRenderer),
                 "tile-lists": (type("P", (p.TileListsRenderer,), {"graph_still": False}), p.TileListsRenderer),
                 "scaffold (starter)": (scaffold(False), scaffold(True))}
    times = {}
    for name, (plain, graphed) in renderers.items():
        for scene in args.scenes.split(","):
            row = {}
            for label, cls in (("python", plain), ("graph", graphed)):
                best, totals = course_time(cls, make_scene(scene), args.size)
                row[label] = {"total": best["total"], "render": best["render"], "totals": totals}
            times[f"{name}/{scene}"] = row
            print(f"{name:>20} {scene:<10} Total {row['python']['total']:.4f} ms launched from Python, "
                  f"{row['graph']['total']:.4f} ms as a graph (render {row['python']['render']:.4f} -> "
                  f"{row['graph']['render']:.4f})", flush=True)
    probe = capture_probe()
    for name, what in probe.items():
        print(f"capture {name}: {what}")
    record = {"gpu": gpu_name(), "commit": current_commit(), "size": args.size,
              "method": "per-frame Total (clear + advance + render, each synchronized), frames 0:4, min of 3 runs",
              "call_host_us": costs, "times_ms": times, "capture": probe}
    Path(args.output).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()

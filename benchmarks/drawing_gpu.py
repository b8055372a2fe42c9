"""The CUDA renderers' drawing paths on the GPU (docs/drawing.md; issue 39), in one run:

1. a sweep over the drawing options on random scenes: cuda-tiled against -r cpu bit for bit (its
   8-bit picture too), cuda within its bound (twins/draw_drawing.py ``tolerance``), each run to
   run;
2. what anti-aliasing costs on cuda: a course scene's circles (as made; by default rand100k and
   rand1M at 1024) as drawings (alpha 0.5 and per circle), anti-aliasing off and on side by side
   (CUDA events around clear + render, alternating rounds, min over the runs), beside the course
   path (no drawing) and cuda-tiled's drawing path.

python -m benchmarks drawing-gpu [--runs N] [--rounds K] [--cases SCENE:SIZE,...] [--sweep-n N] [--json FILE]
"""
from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))        # the tests' scene maker: one definition


def sweep(n: int, log: list[str]) -> list[dict[str, Any]]:
    from test_cuda_drawing import BACKGROUNDS, random_drawing

    from circle_render import registry
    from circle_render.cpu.reference_drawing import drawing_image
    from circle_render.cpu.shading import picture_bytes
    from circle_render.twins.draw_drawing import tolerance

    def draw(name: str, scene: Any, width: int, height: int) -> np.ndarray:
        r = registry.create(name)
        r.load(scene, width, height)
        r.clear()
        r.render()
        r.synchronize()
        image: np.ndarray = r.get_image()
        return image

    rows = []
    for (aa, bg, edge, shading), (width, height) in itertools.product(
            itertools.product([False, True], BACKGROUNDS, [False, True], ["flat", "snow"]),
            [(512, 512), (640, 360), (360, 640)]):
        s = random_drawing(len(rows), n, width, height, aa, bg, edge, shading, big=25)
        want = drawing_image(s, width, height, threads=16)
        tiled, tiled2 = draw("cuda-tiled", s, width, height), draw("cuda-tiled", s, width, height)
        fast, fast2 = draw("cuda", s, width, height), draw("cuda", s, width, height)
        row = {"antialias": aa, "background": str(bg), "outlines": edge, "shading": shading,
               "size": f"{width}x{height}", "circles": n,
               "tiled_exact": bool(np.array_equal(tiled, want)),
               "tiled_max_diff": float(np.abs(tiled - want).max()),
               "tiled_8bit_equal": bool(np.array_equal(picture_bytes(tiled, s), picture_bytes(want, s))),
               "tiled_deterministic": bool(np.array_equal(tiled, tiled2)),
               "cuda_max_diff": float(np.abs(fast - want).max()), "cuda_bound": tolerance(s),
               "cuda_deterministic": bool(np.array_equal(fast, fast2)),
               "cuda_8bit_max_diff": int(np.abs(picture_bytes(fast, s).astype(int) - picture_bytes(want, s)).max())}
        row["ok"] = (row["tiled_exact"] and row["tiled_8bit_equal"] and row["tiled_deterministic"]
                     and row["cuda_deterministic"] and row["cuda_max_diff"] <= row["cuda_bound"])
        rows.append(row)
        log.append(" ".join(f"{k}={v}" for k, v in row.items()))
        print(log[-1], flush=True)
    return rows


def timing(runs: int, rounds: int, cases: str, tiled: bool, log: list[str]) -> list[dict[str, Any]]:
    from circle_render import registry
    from circle_render.drawing.paint import Drawing
    from circle_render.scenes import make_scene
    from circle_render.timing.timer import event_times

    rows = []
    for case in cases.split(","):
        name, size_text = case.split(":")
        size = int(size_text)
        base = make_scene(name)
        base.animation = None                    # its circles as made, still
        rng = np.random.default_rng(0)
        variants: dict[str, tuple[str, Any]] = {"course path (no drawing)": ("cuda", base)}
        for alpha_name, alpha in (("alpha 0.5", np.full(base.n, 0.5)), ("alpha per circle", rng.uniform(0, 1, base.n))):
            rgba = np.ascontiguousarray(np.c_[base.color, alpha], dtype=np.float32)
            for aa in (False, True):
                s = base.copy()
                s.drawing = Drawing(rgba, antialias=aa)
                variants[f"{alpha_name}, antialias {'on' if aa else 'off'}"] = ("cuda", s)
                if alpha_name == "alpha 0.5" and tiled:
                    variants[f"cuda-tiled {alpha_name}, antialias {'on' if aa else 'off'}"] = ("cuda-tiled", s)
        loaded = {}
        for label, (renderer, scene) in variants.items():
            r = registry.create(renderer)
            r.load(scene, size, size)
            r.clear()
            r.render()
            r.synchronize()
            loaded[label] = r
        best: dict[str, list[float]] = {label: [] for label in variants}
        for _ in range(rounds):                  # alternating: drift hits every variant alike
            for label, r in loaded.items():
                best[label] += event_times(lambda r=r: (r.clear(), r.render()), runs, warmup=1).runs
        for label in variants:
            row = {"scene": name, "size": size, "variant": label, "renderer": variants[label][0],
                   "min_ms": min(best[label]), "median_ms": float(np.median(best[label])), "runs": len(best[label])}
            rows.append(row)
            log.append(f"{name} {label}: min {row['min_ms']:.3f} ms, median {row['median_ms']:.3f} ms")
            print(log[-1], flush=True)
        for alpha_name in ("alpha 0.5", "alpha per circle"):
            off = min(best[f"{alpha_name}, antialias off"])
            on = min(best[f"{alpha_name}, antialias on"])
            rows.append({"scene": name, "size": size, "variant": f"{alpha_name}: antialias on / off",
                         "ratio": on / off})
    return rows


def table(sweep_rows: list[dict[str, Any]], time_rows: list[dict[str, Any]]) -> str:
    lines = ["sweep: cases, all ok, tiled exact, tiled 8-bit equal, max cuda diff / bound, deterministic"]
    if sweep_rows:
        worst = max(r["cuda_max_diff"] / r["cuda_bound"] for r in sweep_rows)
        lines.append(f"  {len(sweep_rows)} cases; ok {sum(r['ok'] for r in sweep_rows)}; "
                     f"tiled exact {sum(r['tiled_exact'] for r in sweep_rows)}; "
                     f"8-bit equal {sum(r['tiled_8bit_equal'] for r in sweep_rows)}; "
                     f"worst cuda diff/bound {worst:.3f}; cuda 8-bit max diff "
                     f"{max(r['cuda_8bit_max_diff'] for r in sweep_rows)}; deterministic "
                     f"{sum(r['tiled_deterministic'] and r['cuda_deterministic'] for r in sweep_rows)}")
        for r in sweep_rows:
            if not r["ok"]:
                lines.append(f"  NOT OK: {r}")
    lines.append("timing (CUDA events, clear + render, min ms):")
    for r in time_rows:
        case = f"{r['scene']}@{r['size']}"
        if "ratio" in r:
            lines.append(f"  {case:<15} {r['variant']:<42} {r['ratio']:.2f}x")
        else:
            lines.append(f"  {case:<15} {r['variant']:<42} {r['min_ms']:8.3f} ms (median {r['median_ms']:.3f})")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="timed runs a round (default 10)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (default 3)")
    ap.add_argument("--sweep-n", type=int, default=3000, help="circles a sweep scene (default 3000; 0: no sweep)")
    ap.add_argument("--no-timing", action="store_true", help="the sweep only")
    ap.add_argument("--cases", default="rand100k:1024,rand1M:1024", help="timed scenes, SCENE:SIZE,... "
                    "(default rand100k:1024,rand1M:1024)")
    ap.add_argument("--no-tiled", action="store_true", help="time cuda only (not cuda-tiled's drawing path)")
    ap.add_argument("--json", help="write the record here")
    ap.add_argument("--commit", default="", help="the commit measured (for the record)")
    ap.add_argument("--log", help="write every line here")
    args = ap.parse_args()
    import cupy as cp

    from circle_render.timing.bench import write_record
    log: list[str] = []
    time_rows = [] if args.no_timing else timing(args.runs, args.rounds, args.cases, not args.no_tiled, log)
    sweep_rows = sweep(args.sweep_n, log) if args.sweep_n else []
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    record = {"kind": "drawing-gpu", "commit": args.commit, "device": device, "timing": time_rows, "sweep": sweep_rows}
    if args.log:
        Path(args.log).write_text("\n".join(log) + "\n")
    if args.json:
        write_record(record, args.json)
    print(table(sweep_rows, time_rows))


if __name__ == "__main__":
    main()

"""Correctness sweep of a CUDA renderer against the reference: every scene, sizes 1024,
2048, 517 and 64, seeds 0 and 7; records mismatches and the largest |RGB difference|.

    python -m benchmarks gpu-check [-r cuda] [-o check.json]
"""
import argparse
import hashlib
import json

import numpy as np

from circle_render import registry
from circle_render.course import compare
from circle_render.cpu.reference import reference_image
from circle_render.scenes import SCENE_NAMES, make_scene
from circle_render.timing.timer import Stopwatch


def bands(size):
    if size <= 1024:
        return [None] if size < 1024 else [(0, 64), (480, 544), (960, 1024)]
    return [(0, 32), (size // 2 - 16, size // 2 + 16), (size - 32, size)]


def digest(img) -> str:
    return hashlib.sha256(np.ascontiguousarray(img, dtype=np.float32).tobytes()).hexdigest()


def make_hashes(sizes, seeds, scenes, path):
    """CPU only: hashes of the reference bands, so the GPU run can skip identical ones."""
    out = {}
    for size in sizes:
        for seed in seeds:
            for name in scenes:
                s = make_scene(name, seed)
                for rows in bands(size):
                    out[f"{name}/{size}/{seed}/{rows}"] = digest(reference_image(s, size, size, rows=rows))
                print(name, size, seed, flush=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=0)


def check_case(renderer: str, name: str, size: int, seed: int, known: dict) -> dict:
    """One scene at one size and seed against the reference (its bands past 1024)."""
    s = make_scene(name, seed)
    r = registry.create(renderer)
    r.load(s, size, size)
    r.clear(); r.advance(); r.render()
    img = r.get_image()
    worst, count, exact = 0.0, 0, 0
    for rows in bands(size):
        got = img if rows is None else img[rows[0]:rows[1]]
        if known.get(f"{name}/{size}/{seed}/{rows}") == digest(got):
            exact += 1          # bit-identical to the reference: no mismatch, diff 0
            continue
        c = compare(reference_image(s, size, size, rows=rows), got)
        worst, count = max(worst, c.max_abs_diff), count + c.count
    return {"scene": name, "size": size, "seed": seed, "mismatches": count,
            "max_abs_diff": worst, "rows": "all" if bands(size) == [None] else str(bands(size)),
            "bit_identical_bands": exact,
            "passed": count <= 5 and worst < 1e-3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--renderer", default="cuda")
    ap.add_argument("-o", "--output", default="gpu_check.json")
    ap.add_argument("--sizes", default="1024,2048,517,64")
    ap.add_argument("--seeds", default="0,7")
    ap.add_argument("--scenes", default=",".join(SCENE_NAMES))
    ap.add_argument("--make-hashes", help="write reference-band hashes to this file and stop (CPU)")
    ap.add_argument("--hashes", help="reference-band hashes from --make-hashes: equal bands are exact")
    a = ap.parse_args()
    sizes, seeds = [int(v) for v in a.sizes.split(",")], [int(v) for v in a.seeds.split(",")]
    if a.make_hashes:
        return make_hashes(sizes, seeds, a.scenes.split(","), a.make_hashes)
    known = {}
    if a.hashes:
        with open(a.hashes) as f:
            known = json.load(f)
    results, ok = [], True
    for size in sizes:
        for seed in seeds:
            for name in a.scenes.split(","):
                with Stopwatch() as case:            # for the progress line
                    row = check_case(a.renderer, name, size, seed, known)
                results.append(row)
                ok &= row["passed"]
                with open(a.output, "w") as f:      # after every case, so a timeout keeps what finished
                    json.dump({"renderer": a.renderer, "all_passed": ok, "results": results}, f, indent=1)
                print(f"{name:<14} size {size:>4} seed {seed}: {row['mismatches']} mismatches, max |diff| "
                      f"{row['max_abs_diff']:.2e} {'ok' if row['passed'] else 'FAIL'}, "
                      f"{row['bit_identical_bands']}/{len(bands(size))} bit-identical ({case.s:.1f} s)", flush=True)
    with open(a.output, "w") as f:
        json.dump({"renderer": a.renderer, "all_passed": ok, "results": results}, f, indent=1)
    print("ALL PASSED" if ok else "SOME FAILED")


if __name__ == "__main__":
    main()

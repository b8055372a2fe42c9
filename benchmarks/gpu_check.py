"""Correctness sweep of a CUDA renderer against the reference: every scene, sizes 1024,
2048, 517 and 64, seeds 0 and 7; records mismatches and the largest |RGB difference|.

    PYTHONPATH=. python benchmarks/gpu_check.py [-r cuda] [-o check.json]
"""
import argparse
import json
import time

from renderer import registry
from renderer.check import compare
from renderer.reference import reference_image
from scenes import SCENE_NAMES, make_scene


def bands(size):
    if size <= 1024:
        return [None] if size < 1024 else [(0, 64), (480, 544), (960, 1024)]
    return [(0, 32), (size // 2 - 16, size // 2 + 16), (size - 32, size)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--renderer", default="cuda")
    ap.add_argument("-o", "--output", default="gpu_check.json")
    ap.add_argument("--sizes", default="1024,2048,517,64")
    ap.add_argument("--seeds", default="0,7")
    a = ap.parse_args()
    results, ok = [], True
    for size in map(int, a.sizes.split(",")):
        for seed in map(int, a.seeds.split(",")):
            for name in SCENE_NAMES:
                t = time.time()
                s = make_scene(name, seed)
                r = registry.create(a.renderer)
                r.load(s, size, size)
                r.clear(); r.advance(); r.render()
                img = r.get_image()
                worst, count = 0.0, 0
                for rows in bands(size):
                    ref = reference_image(s, size, size, rows=rows)
                    c = compare(ref, img if rows is None else img[rows[0]:rows[1]])
                    worst, count = max(worst, c.max_abs_diff), count + c.count
                passed = count <= 5 and worst < 1e-3
                ok &= passed
                results.append({"scene": name, "size": size, "seed": seed, "mismatches": count,
                                "max_abs_diff": worst, "rows": "all" if bands(size) == [None] else str(bands(size)),
                                "passed": passed})
                print(f"{name:<14} size {size:>4} seed {seed}: {count} mismatches, max |diff| "
                      f"{worst:.2e} {'ok' if passed else 'FAIL'} ({time.time() - t:.1f} s)", flush=True)
    with open(a.output, "w") as f:
        json.dump({"renderer": a.renderer, "all_passed": ok, "results": results}, f, indent=1)
    print("ALL PASSED" if ok else "SOME FAILED")


if __name__ == "__main__":
    main()

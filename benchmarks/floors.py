"""The physical floor of each stage of the fast renderer, next to its measured time.

For each heavy scene and size: count the work each stage cannot avoid (NumPy, on any machine),
divide by the machine's measured ceilings (benchmarks/rates.py) and put the stage probe's
measured kernel times (benchmarks/stage_probe.py) beside them. Writes a Markdown table.

What is counted (the least any correct renderer of this design must do):
- bin: read every circle once (16 bytes) and write every list entry once (8 bytes binned,
  4 bytes sparse); entries are (circle, supertile) pairs (binned) or (circle, tile) pairs
  (sparse) of the circles' pixel boxes.
- draw: per tile, read once each circle that one of its pixels blends (16 bytes; colour 12 more
  for flat scenes), and per pixel the blends it needs: front to back until T < T_EPS (flat: 14
  layers of alpha 1/2), each ~8 FP32 instructions (flat) or ~25 plus 2 special-function
  operations (snow); write-out: the image once (16 bytes a pixel).
A stage's floor is the largest of bytes / copy bandwidth, FP32 instructions / FMA rate and
special functions / SFU rate, plus what its kernels cost to start inside a graph (measured:
graph_kernel_us a kernel; bin 3 kernels, sparse bin 1 (4 over 2048 pixels a side), draw 1).
Blends are counted on random tiles (exact float32 coverage, as the reference decides it) and
scaled to the image.

    python -m benchmarks floors --rates benchmarks/results/H100-rates-6098444.json \\
        --probe benchmarks/results/H100-cuda-stage-probe-4272152.json -o floors.md
"""
import argparse
import json

import numpy as np

from circle_render.constants import FLAT_ALPHA, T_EPS
from circle_render.cpu.shading import circle_bounds, pixel_centres, snow_alpha_color
from circle_render.cuda.binned import BinnedPolicy
from circle_render.cuda.fast import plan_fast
from circle_render.cuda.sparse import SharedCounting, SparsePolicy
from circle_render.scenes import make_scene
from circle_render.scenes.scene import SNOW
from circle_render.twins import bin as B
from circle_render.twins.tiles import tile_box

SCENES = ("rand100k", "rand1M", "micro2M", "snowsingle", "biglittle")
FLAT_OPS, SNOW_OPS, SNOW_SFU = 8, 25, 2


def blended_sets(scene, size: int, tile: int, tiles: int = 24, seed: int = 1):
    """For `tiles` random tiles: per pixel, how many circles cover it and how many it blends front
    to back until T < T_EPS; per tile, how many distinct circles its pixels blend (what a draw
    with early exit must read). Coverage is exact float32, as the reference decides it."""
    rng = np.random.default_rng(seed)
    x0, x1, y0, y1 = circle_bounds(scene.position, scene.radius, size, size)
    cx, cy = pixel_centres(size), pixel_centres(size)
    cover, blended, per_tile = [], [], []
    n_tiles = -(-size // tile)
    for tx, ty in rng.integers(0, n_tiles, (tiles, 2)):
        lo_x, lo_y = tx * tile, ty * tile
        hi_x, hi_y = min(lo_x + tile, size), min(lo_y + tile, size)
        cand = np.nonzero((x0 < hi_x) & (x1 > lo_x) & (y0 < hi_y) & (y1 > lo_y))[0]
        px, py = np.meshgrid(cx[lo_x:hi_x], cy[lo_y:hi_y])
        px, py = px.ravel(), py.ravel()
        used = set()
        for k in range(len(px)):
            dx = scene.position[cand, 0] - px[k]
            dy = scene.position[cand, 1] - py[k]
            d2 = dx * dx + dy * dy
            ok = d2 <= scene.radius[cand] * scene.radius[cand]
            cov, d2 = cand[ok][::-1], d2[ok][::-1]           # front (last circle) to back
            if scene.shading == SNOW:
                alpha, _ = snow_alpha_color(d2, scene.radius[cov], scene.position[cov, 2])
            else:
                alpha = np.full(len(cov), FLAT_ALPHA, dtype=np.float32)
            T = np.cumprod(1.0 - alpha.astype(np.float64))
            need = int(np.searchsorted(-T, -T_EPS, side="right") + 1) if len(T) else 0   # through the first T < T_EPS
            need = min(need, len(cov))
            cover.append(len(cov))
            blended.append(need)
            used.update(cov[:need].tolist())
        per_tile.append(len(used))
    return float(np.mean(cover)), float(np.mean(blended)), float(np.mean(per_tile))


def counts(name: str, size: int) -> dict:
    scene = make_scene(name)
    p = plan_fast(scene, size, size)
    g = p.geometry
    box = tile_box(scene.position, scene.radius, size, size, g.tile)
    tiles = g.tile_count
    pairs = int(((box[1] - box[0] + 1).clip(0) * (box[3] - box[2] + 1).clip(0)).sum())   # (circle, tile)
    if isinstance(p, BinnedPolicy):
        entries = len(B.super_touch(scene.position, scene.radius, size, size, g.tile, p.super_px, p.super_grid).circle)
        entry_bytes, bin_kernels = 8, 3
    elif isinstance(p, SparsePolicy):
        entries, entry_bytes = pairs, 4
        bin_kernels = 1 if isinstance(p.counting, SharedCounting) else 4
    else:
        entries, entry_bytes, bin_kernels = 0, 0, 0
    cover, blended, per_tile = blended_sets(scene, size, g.tile)
    pixels = size * size
    snow = scene.shading == SNOW
    return {"scene": name, "size": size, "path": p.name, "n": scene.n, "tiles": tiles, "entries": entries,
            "bin_kernels": bin_kernels,
            "pairs": pairs, "cover": cover, "blended": blended,
            "bin_bytes": (16 * scene.n + entry_bytes * entries) if entries else 0,
            "blended_a_tile": per_tile, "draw_bytes": tiles * per_tile * (16 if snow else 28),
            "write_bytes": 16 * pixels,
            "draw_ops": pixels * blended * (SNOW_OPS if snow else FLAT_OPS),
            "draw_sfu": pixels * blended * (SNOW_SFU if snow else 0)}


def floors(c: dict, rates: dict) -> dict:
    bw = rates["copy_GBps"] * 1e9
    fma = rates["fma_TFLOPs"] * 1e12 / 2              # FP32 instructions a second (an FMA is 2 flops)
    sfu = rates["sfu_Gops"] * 1e9
    us, launch = 1e6, rates["graph_kernel_us"]
    return {"bin": c["bin_bytes"] / bw * us + c["bin_kernels"] * launch,
            "draw": max(c["draw_bytes"] / bw, c["draw_ops"] / fma, c["draw_sfu"] / sfu) * us + launch,
            "write": c["write_bytes"] / bw * us}


def measured(probe: dict, name: str, size: int) -> dict:
    """The probe's binning and first draw (the gated back layer's kernels left out) of the scene,
    by stage; records from before the paths were split named the walk's and the front layer's
    draw "draw"."""
    for key, t in probe["scenes"].items():
        if key.split()[:2] == [name, str(size)]:
            bin_ms = sum(v for k, v in t.items() if k.startswith(("bin/", "sparse_bin/")))
            draw_ms = sum(v for k, v in t.items() if k.startswith(("walk/", "draw/", "draw_front/", "sparse_draw/")))
            return {"bin": bin_ms * 1e3, "draw": draw_ms * 1e3}
    return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--sizes", default="1024,4096")
    ap.add_argument("-o", "--output", default="floors.md")
    ap.add_argument("--json")
    a = ap.parse_args()
    with open(a.rates) as fr, open(a.probe) as fp:
        rates, probe = json.load(fr), json.load(fp)
    rows, record = [], []
    for name in SCENES:
        for size in (int(s) for s in a.sizes.split(",")):
            c = counts(name, size)
            f, m = floors(c, rates), measured(probe, name, size)
            record.append({**c, "floor_us": f, "measured_us": m})
            draw_floor = f["draw"] + f["write"]
            rows.append(
                f"| {name} | {size} | {c['path']} | {c['n']:,} | {c['entries']:,} "
                f"| {c['cover']:.1f} / {c['blended']:.1f} / {c['blended_a_tile']:.0f} "
                f"| {f['bin']:.1f} | {m.get('bin', 0):.1f} | {m.get('bin', 0) / f['bin'] if f['bin'] else 0:.1f}x "
                f"| {f['draw']:.1f} + {f['write']:.1f} | {m.get('draw', 0):.1f} "
                f"| {m.get('draw', 0) / draw_floor:.1f}x |")
            print(rows[-1], flush=True)
    head = ("| scene | size | path | circles | list entries | covering / blended a pixel, circles blended a tile "
            "| bin floor us | bin us | bin / floor | draw floor + write-out us | draw us | draw / floor |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    with open(a.output, "w") as fh:
        fh.write(head + "\n" + "\n".join(rows) + "\n")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"rates": a.rates, "probe": a.probe, "rows": record}, fh, indent=1)


if __name__ == "__main__":
    main()

"""Where the fast renderer's draw kernel spends its time, block by block.

Compiles render_fast with -DPROFILE_BLOCKS, which makes each block record its start and end on
the GPU's global timer, its SM, how many cull steps it ran and how many hits its first warp
blended. Prints per scene: the kernel's span, how many blocks ran at once, the spread of block
durations and steps, and the blocks that finished last (the critical path).

    PYTHONPATH=. python benchmarks/block_profile.py [--scenes a,b] [--variants JSON] [-o out.json]
"""
import argparse
import json

import numpy as np

from circle_render.cuda.fast import FastCudaRenderer
from circle_render.util import ceil_div


class ProfiledRenderer(FastCudaRenderer):
    """The fast renderer with its draw kernels compiled with per-block timing (diagnostics only)."""

    def _module(self, file, plan):
        from circle_render.cuda.module import load_module
        blocks = plan.tiles[0] * plan.tiles[1]
        self.profiled = load_module(file, plan.defines | {"PROFILE_BLOCKS": blocks}, fmad=True)
        self.blocks = blocks
        return self.profiled


def profile(scene, size, variant, reps=5):
    """Per-block records (start ns, end ns, sm, steps, hits) of the fastest of `reps` draws."""
    import cupy as cp
    r = ProfiledRenderer(tuning=variant)
    r.load(scene, size, size)
    r.advance()
    buf = cp.ndarray((r.blocks, 4), dtype=np.uint64, memptr=r.profiled.get_global("block_profile"))
    best = None
    for _ in range(reps):
        r.clear(); r.render(); r.synchronize()
        rec = buf.get().astype(np.int64)
        span = rec[:, 1].max() - rec[:, 0].min()
        if best is None or span < best[0]:
            best = (span, rec)
    return best[1], r.plan.tile


def summarize(rec, tile, size):
    start, end = rec[:, 0] - rec[:, 0].min(), rec[:, 1] - rec[:, 0].min()
    dur = end - start
    steps, hits = rec[:, 2] & 0xFFFFFFFF, rec[:, 3]
    sms = len(np.unique(rec[:, 2] >> 32))
    events = np.concatenate([np.stack([start, np.ones_like(start)], 1),
                             np.stack([end, -np.ones_like(end)], 1)])
    events = events[np.lexsort((events[:, 1], events[:, 0]))]
    concurrent = int(np.cumsum(events[:, 1]).max())
    tiles_x = ceil_div(size, tile)
    last = np.argsort(end)[-5:][::-1]
    q = lambda a: [int(np.percentile(a, p)) for p in (50, 90, 99)] + [int(a.max())]
    return {"span_us": float(end.max()) / 1e3, "blocks": len(rec), "sms": sms,
            "max_concurrent": concurrent,
            "last_start_us": float(start.max()) / 1e3,
            "dur_us_p50_p90_p99_max": [round(v / 1e3, 2) for v in q(dur)],
            "steps_p50_p90_p99_max": q(steps), "hits_p50_p90_p99_max": q(hits),
            "sum_block_us": float(dur.sum()) / 1e3,
            "last_blocks": [{"tile": [int(i % tiles_x), int(i // tiles_x)], "steps": int(steps[i]),
                             "hits": int(hits[i]), "start_us": round(start[i] / 1e3, 2),
                             "dur_us": round(dur[i] / 1e3, 2)} for i in last]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", default="rand10k,biglittle,micro2M")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--variants", default="[{}]")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    from circle_render.scenes import make_scene
    out = {}
    for name in a.scenes.split(","):
        scene = make_scene(name)
        for variant in json.loads(a.variants):
            rec, tile = profile(scene, a.size, variant)
            s = summarize(rec, tile, a.size)
            key = f"{name} {json.dumps(variant)}"
            out[key] = s
            print(key, json.dumps({k: v for k, v in s.items() if k != "last_blocks"}), flush=True)
            for b in s["last_blocks"][:3]:
                print("   last:", json.dumps(b), flush=True)
    if a.output:
        with open(a.output, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

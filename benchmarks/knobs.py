"""Same-call A/B of the fast renderer's knobs and paths: each question is a baseline and its
variants, all loaded side by side for one scene and size, and timed in interleaved rounds
(GPU time of one frame's graph, queued behind a busy-wait so no host gap is measured).

A variant is data: {"tuning": {...}} (TUNABLE overrides), {"choices": {...}} (the renderer's
path choices: binned, sparse, front), {"source": [[old, new], ...]} (a text edit of the kernel
sources, for what is not a compile option).
"""
from __future__ import annotations

import statistics

from pathlib import Path

import numpy as np

PROBE = Path(__file__).resolve().parent / "kernels" / "probe.cu"     # spin: a busy-wait

# question -> (scene, size) cases, and variants (the first is the baseline)
QUESTIONS = {
    "TILE_ORDER 2 (rings from the border in) vs 1": {
        "cases": [("rand10k", 1024), ("biglittle", 1024), ("littlebig", 1024), ("rand1M", 1024)],
        "variants": {"1": {}, "2": {"tuning": {"TILE_ORDER": 2}}, "0 (rows)": {"tuning": {"TILE_ORDER": 0}}}},
    "ROW_ORDER_MIN_PX (rows at 4096) vs ring first": {
        "cases": [("rand1M", 4096), ("rand100k", 4096), ("snowsingle", 4096), ("rand1M", 2048)],
        "variants": {"rows (plan)": {}, "ring first": {"tuning": {"TILE_ORDER": 1}}}},
    "BLEND_CHECK 4 vs 1 / never": {
        "cases": [("rand10k", 1024), ("rand100k", 1024), ("rand1M", 1024), ("biglittle", 1024),
                  ("littlebig", 1024), ("rand1M", 4096)],
        "variants": {"4": {}, "1": {"tuning": {"BLEND_CHECK": 1}}, "never": {"tuning": {"BLEND_CHECK": 1 << 20}}}},
    "FAST_MIN_BLOCKS 4 vs no bound": {
        "cases": [("rand10k", 1024), ("rand1M", 1024), ("biglittle", 1024), ("snowsingle", 1024), ("rand1M", 4096)],
        "variants": {"4": {}, "1 (no bound)": {"tuning": {"FAST_MIN_BLOCKS": 1}}, "3": {"tuning": {"FAST_MIN_BLOCKS": 3}}}},
    "BIN_TARGET_BLOCKS 1024 vs 256 / 4096": {
        "cases": [("rand100k", 1024), ("rand1M", 1024), ("snowsingle", 1024), ("rand1M", 4096), ("snowsingle", 4096)],
        "variants": {"1024": {}, "256": {"tuning": {"BIN_TARGET_BLOCKS": 256}},
                     "4096": {"tuning": {"BIN_TARGET_BLOCKS": 4096}}}},
    "SPARSE_AHEAD 6 vs 1": {
        "cases": [("micro2M", 1024), ("micro2M", 2048)],
        "variants": {"6": {}, "1": {"tuning": {"SPARSE_AHEAD": 1}}, "2": {"tuning": {"SPARSE_AHEAD": 2}}}},
    "sparse path (global counting past 2048 px) vs binned": {
        "cases": [("micro2M", 4096), ("micro2M", 3072), ("micro2M", 2048)],
        "variants": {"sparse (plan)": {}, "binned": {"choices": {"sparse": False}}}},
    "evict-first image stores vs plain": {
        "cases": [("rand10k", 1024), ("rand1M", 1024), ("snowsingle", 1024), ("biglittle", 1024),
                  ("rand1M", 4096), ("rand100k", 4096), ("snowsingle", 4096)],
        "variants": {"evict-first": {}, "plain": {"source": [["__stcs(", "plain_store("]]}}},
}
PLAIN_STORE = "template <class P, class V> __device__ __forceinline__ void plain_store(P p, V v) { *p = v; }\n"


def _spin():
    from circle_render.cuda.module import load_module
    return load_module(PROBE).get_function("spin")


def _load(scene, size, variant):
    """A FastCudaRenderer of the variant, loaded (its kernels compiled from edited sources)."""
    from circle_render.cuda import module
    from circle_render.cuda.fast import FastCudaRenderer
    edits = variant.get("source")
    original = module.kernel_source
    if edits:
        def edited(name):
            text = original(name)
            for old, new in edits:
                text = text.replace(old, new)
            return PLAIN_STORE + text if "plain_store(" in text else text
        module.kernel_source = edited
        module._modules.clear()
    try:
        r = FastCudaRenderer(tuning=variant.get("tuning"), **variant.get("choices", {}))
        r.load(scene, size, size)
    finally:
        module.kernel_source = original
        if edits:
            module._modules.clear()
    r.clear(); r.advance(); r.render(); r.synchronize()
    return r


def frame_gpu_us(r, spin, reps):
    """GPU microseconds of ``render()`` (after a clear), each queued behind a busy-wait."""
    import cupy as cp
    start, stop, out = cp.cuda.Event(), cp.cuda.Event(), []
    for _ in range(reps):
        r.clear()
        spin((1,), (1,), (np.int64(200_000),))
        start.record(); r.render(); stop.record()
        stop.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, stop) * 1e3)
    return out


def run(questions=None, rounds=7, reps=9, progress=print) -> dict:
    from circle_render.scenes import make_scene
    spin, scenes, record = _spin(), {}, {}
    for q, spec in QUESTIONS.items():
        if questions and not any(s in q for s in questions):
            continue
        record[q] = {}
        for name, size in spec["cases"]:
            scene = scenes.setdefault(name, make_scene(name))
            rs = {v: _load(scene, size, var) for v, var in spec["variants"].items()}
            samples = {v: [] for v in rs}
            for _ in range(rounds):
                for v, r in rs.items():
                    samples[v] += frame_gpu_us(r, spin, reps)
            med = {v: statistics.median(s) for v, s in samples.items()}
            base = next(iter(med.values()))
            record[q][f"{name} {size}"] = {v: {"us": round(m, 2), "vs_baseline": round(m / base, 4)}
                                           for v, m in med.items()}
            progress(f"{q:<52} {name:>10} {size:>5}  " + "  ".join(
                f"{v}: {m:8.1f} us ({m / base:5.3f})" for v, m in med.items()))
            del rs
    return record


if __name__ == "__main__":
    import argparse
    import json
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output")
    ap.add_argument("--only", nargs="*", help="substrings of the questions to run")
    a = ap.parse_args()
    from circle_render.gpu import gpu_name
    from circle_render.timing.bench import current_commit
    rec = {"gpu": gpu_name(), "commit": current_commit(),
           "method": "GPU time of render() (one graph) behind a busy-wait, median of interleaved rounds",
           "questions": run(a.only)}
    if a.output:
        with open(a.output, "w") as f:
            json.dump(rec, f, indent=1)

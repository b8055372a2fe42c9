"""Same-call A/B of the fast renderer's knobs and paths: each question is a baseline and its
variants, all loaded side by side for one scene and size, and timed in interleaved rounds
(GPU time of one frame's graph, queued behind a busy-wait so no host gap is measured).

A variant is data: {"tuning": {...}} (TUNABLE overrides), {"constants": {...}} (fixed constants
of constants.py, for the plan and as compile options), {"choices": {...}} (the renderer's path
choices: binned, sparse, front), {"source": [[old, new], ...]} (a text edit of the kernel
sources). The record H100-knobs-6b626fd.json also holds the tile-order questions, asked at
6b626fd of TILE_ORDER 2 and ROW_ORDER_MIN_PX, which were dropped after it.

    PYTHONPATH=. python -m benchmarks knobs [-o record.json] [--only SUBSTRING ...]
"""
from __future__ import annotations

import statistics

from frame_gpu import frame_times  # benchmarks/frame_gpu.py, beside this script

# question -> (scene, size) cases, and variants (the first is the baseline)
QUESTIONS = {
    "BLEND_CHECK 4 vs 1 / never": {
        "cases": [("rand10k", 1024), ("rand100k", 1024), ("rand1M", 1024), ("biglittle", 1024),
                  ("littlebig", 1024), ("rand1M", 4096)],
        "variants": {"4": {}, "1": {"constants": {"BLEND_CHECK": 1}},
                     "never": {"constants": {"BLEND_CHECK": 1 << 20}}}},
    "FAST_MIN_BLOCKS 4 vs no bound": {
        "cases": [("rand10k", 1024), ("rand1M", 1024), ("biglittle", 1024), ("snowsingle", 1024), ("rand1M", 4096)],
        "variants": {"4": {}, "1 (no bound)": {"constants": {"FAST_MIN_BLOCKS": 1}},
                     "3": {"constants": {"FAST_MIN_BLOCKS": 3}}}},
    "BIN_TARGET_BLOCKS 1024 vs 256 / 4096": {
        "cases": [("rand100k", 1024), ("rand1M", 1024), ("snowsingle", 1024), ("rand1M", 4096), ("snowsingle", 4096)],
        "variants": {"1024": {}, "256": {"constants": {"BIN_TARGET_BLOCKS": 256}},
                     "4096": {"constants": {"BIN_TARGET_BLOCKS": 4096}}}},
    "SPARSE_AHEAD 6 vs 1": {
        "cases": [("micro2M", 1024), ("micro2M", 2048)],
        "variants": {"6": {}, "1": {"constants": {"SPARSE_AHEAD": 1}}, "2": {"constants": {"SPARSE_AHEAD": 2}}}},
    "sparse path (global counting past 2048 px) vs binned": {
        "cases": [("micro2M", 4096), ("micro2M", 3072), ("micro2M", 2048)],
        "variants": {"sparse (plan)": {}, "binned": {"choices": {"sparse": False}}}},
    "evict-first image stores vs plain": {
        "cases": [("rand10k", 1024), ("rand1M", 1024), ("snowsingle", 1024), ("biglittle", 1024),
                  ("rand1M", 4096), ("rand100k", 4096), ("snowsingle", 4096)],
        "variants": {"evict-first": {}, "plain": {"source": [["__stcs(", "plain_store("]]}}},
}
PLAIN_STORE = "template <class P, class V> __device__ __forceinline__ void plain_store(P p, V v) { *p = v; }\n"


def load_variant(scene, size, variant):
    """A FastCudaRenderer of the variant, loaded and warmed (its kernels compiled from edited
    sources); also how benchmarks/stage_probe.py reads its --variants."""
    from circle_render import constants
    from circle_render.cuda import module
    from circle_render.cuda.fast import FastCudaRenderer
    edits, fixed = variant.get("source"), variant.get("constants", {})
    original, options, saved = module.kernel_source, module.compile_options, {k: getattr(constants, k) for k in fixed}
    if fixed:
        for k, v in fixed.items():
            setattr(constants, k, v)
        module.compile_options = lambda extra=None: options({**fixed, **(extra or {})})
        module._modules.clear()
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
        module.kernel_source, module.compile_options = original, options
        for k, v in saved.items():
            setattr(constants, k, v)
        if edits or fixed:
            module._modules.clear()
    r.clear(); r.advance(); r.render(); r.synchronize()
    return r


def run(questions=None, rounds=7, reps=9, progress=print) -> dict:
    from circle_render.scenes import make_scene
    scenes, record = {}, {}
    for q, spec in QUESTIONS.items():
        if questions and not any(s in q for s in questions):
            continue
        record[q] = {}
        for name, size in spec["cases"]:
            scene = scenes.setdefault(name, make_scene(name))
            rs = {v: load_variant(scene, size, var) for v, var in spec["variants"].items()}
            samples = {v: [] for v in rs}
            for _ in range(rounds):
                for v, r in rs.items():
                    samples[v] += frame_times(r, reps)
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

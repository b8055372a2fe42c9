#!/usr/bin/env bash
# One device call for a change that must not change the GPU's pictures or times: first, on the
# idle GPU, one frame's GPU time and picture hash per scene (benchmarks/frame_gpu.py: every
# scene at 1024, the heavy ones at 4096) on the old tree (OLD) and on this one, in the order
# old, new, new, old; then the GPU suite on this tree; last, a table: each case's median over
# the rounds, old and new, and whether the pictures are bit-identical.
# Usage (device, from this tree): OLD=/path/to/old/tree bash benchmarks/device/refactor_check.sh
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
NEW=$PWD
export CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONUNBUFFERED=1
for tree in "$OLD" "$NEW" "$NEW" "$OLD"; do
  label=$([ "$tree" = "$NEW" ] && echo new || echo old)
  (cd "$tree" && PYTHONPATH=$PWD timeout 200 python "$NEW/benchmarks/frame_gpu.py" --label $label 2>>$OUT/frame-gpu.err) \
    | tee -a $OUT/frame-gpu.jsonl | cut -c1-160
done
source benchmarks/device/gpu_suite.sh
python - $OUT/frame-gpu.jsonl <<'PY' | tee $OUT/frame-gpu-table.txt
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
by = {label: [r for r in rows if r["label"] == label] for label in ("old", "new")}
print(f"# frame GPU us (median of {len(by['old'])} rounds each) and pictures; ratio new/old")
for case in by["new"][0]["frame_gpu_us"]:
    t = {k: statistics.median(r["frame_gpu_us"][case] for r in v) for k, v in by.items()}
    same = len({r["picture_sha256"].get(case) for v in by.values() for r in v}) == 1
    ok = abs(t["new"] - t["old"]) <= max(2.0, 0.02 * t["old"])
    print(f"{case:<16} old {t['old']:8.1f} new {t['new']:8.1f} ratio {t['new'] / t['old']:.3f} "
          f"diff {t['new'] - t['old']:+6.1f} {'within' if ok else 'OUTSIDE'} 2%/2us  pictures {'identical' if same else 'DIFFER'}")
PY

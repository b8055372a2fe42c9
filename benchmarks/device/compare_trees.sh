#!/usr/bin/env bash
# The closing device call of a change to GPU code: its GPU tests on this tree, then, alone on the
# idle GPU, the old tree ($OLD) and this one timed in the same call, alternating (times move 5-15%
# between sessions: compare only within one call).
# Usage (device, from this tree's root):
#   OLD=/old/tree OLD_COMMIT=abc NEW_COMMIT=def [ROUNDS=1] [SIZES=1024,4096] [TIMER=bench] [SUITE=draw-tests] \
#     bash benchmarks/device/compare_trees.sh
#   TIMER=bench   `render bench -r cuda` (the course's method: Total = clear + advance + render, min of 3),
#                 every scene at 1024, the heavy ones at other sizes; each round old then new;
#                 records $OUT/bench-SIZE-{old,new}[-ROUND].json
#   TIMER=frames  one frame's GPU time and picture hash per scene (benchmarks/frame_gpu.py: every scene
#                 at 1024, the heavy ones at 4096) in the order old, new, new, old; then a table: each
#                 case's median, new/old, within 2% or 2 us, pictures bit-identical ($OUT/frame-gpu-*)
#   SUITE         gpu_suite.sh's step run first: draw-tests (default), tests (the whole suite) or none
#   without OLD   this tree alone: its tests, the stage probe (1024, 4096) and its bench records
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
NEW=$PWD
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONUNBUFFERED=1
HEAVY=rand10k,rand100k,rand1M,micro2M,biglittle,snow,snowsingle
[ "${SUITE:-draw-tests}" = none ] || bash benchmarks/device/gpu_suite.sh "${SUITE:-draw-tests}"
TREES="old new"; [ -n "${OLD:-}" ] || TREES=new

if [ "${TIMER:-bench}" = frames ]; then
  [ -n "${OLD:-}" ] || { echo "compare_trees.sh: TIMER=frames needs OLD=/path/to/old/tree" >&2; exit 2; }
  for tree in "$OLD" "$NEW" "$NEW" "$OLD"; do
    label=$([ "$tree" = "$NEW" ] && echo new || echo old)
    (cd "$tree" && PYTHONPATH=$PWD timeout 200 python "$NEW/benchmarks/frame_gpu.py" --label $label 2>>$OUT/frame-gpu.err) \
      | tee -a $OUT/frame-gpu.jsonl | cut -c1-160
  done
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
  exit 0
fi

[ -n "${OLD:-}" ] || timeout 120 python -m benchmarks stages --scenes $HEAVY --sizes 1024,4096 -o $OUT/probe.json 2>&1 | tail -15
ROUNDS=${ROUNDS:-1} SIZES=${SIZES:-1024,4096}
for rep in $(seq 1 "$ROUNDS"); do
  for size in ${SIZES//,/ }; do
    scenes=""; [ "$size" = 1024 ] || scenes="--scenes $HEAVY"
    suffix=""; [ "$ROUNDS" = 1 ] || suffix="-$rep"
    for tree in $TREES; do
      if [ $tree = old ]; then dir=$OLD; commit=${OLD_COMMIT:-old}; else dir=$NEW; commit=${NEW_COMMIT:-new}; fi
      echo "== $tree ($commit) $size round $rep"
      (cd "$dir" && PYTHONPATH=$dir CIRCLE_RENDER_COMMIT=$commit timeout 120 python -m circle_render bench -r cuda -s $size \
         $scenes -o $OUT/bench-$size-$tree$suffix.json 2>/dev/null | tail -15)
    done
  done
done 2>&1 | tee $OUT/bench.txt

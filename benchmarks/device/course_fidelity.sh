#!/usr/bin/env bash
# The same-call proof of issue 35 on one GPU: each course-style original of examples/course_port/
# built in the course's own harness and graded by the course's checker.py, its port graded by
# render check (stored Tf where the GPU has stored times, and --tf live), tables printed last.
# Needs .course/ (../shared/tools/course-harness/build.sh) carried beside this tree.
# Usage (device, from this tree's root): bash benchmarks/device/course_fidelity.sh [DESIGNS] [TF]
#   DESIGNS  default tiled_scan,sort_by_tile,tile_lists,tiled_exact (pixel_loop: minutes, its own call)
#   TF       default stored,live (on a GPU without stored times both are live: give live)
set -u
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD CIRCLE_RENDER_CACHE=/tmp/cr-cache
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
C=${COURSE:-$PWD/.course}
[ -d "$C/harness" ] || C=$(cd "$PWD/../.." 2>/dev/null && pwd)/.course      # a worktree carried under .wt/
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
nvcc --version | tail -1
python -m benchmarks course-fidelity --course "$C" -o "$OUT/course-fidelity.json" \
    --designs "${1:-tiled_scan,sort_by_tile,tile_lists,tiled_exact}" --tf "${2:-stored,live}" 2>&1 \
    | tee "$OUT/course-fidelity.txt" | tail -n 120

#!/usr/bin/env bash
# Issue 38's device call, in one call on nvidia-h100-x1 (at most 8 minutes, about 5): the
# Canvas's GPU tests and the course's light scenes at 64 pixels, then `python -m benchmarks
# canvas` (the device, oneshot, host and memory cases: oneshot before pygfx is imported; the one-shot
# calls measured after it in one process were slower: H100-canvas-54356c2e9f.txt) with pygfx and wgpu from the wheels
# carried in .whl, headless through the GPU's Vulkan driver
# (the loader's .debs carried in .gl: /work/.library/device/README.md). Logs and the record
# under $OUT; a table of issue 38's goals last.
# From the lead's checkout, carrying this worktree, its commit written into the command (the
# device has no .git of the worktree; `git -C .wt/canvas rev-parse --short=10 HEAD` here):
#   run(command="cd .wt/canvas && CIRCLE_RENDER_COMMIT=<commit> bash benchmarks/device/canvas.sh",
#       carry=[".wt/canvas"], kind="nvidia-h100-x1")
set -uo pipefail
OUT=${OUT:-/tmp/canvas-out}
mkdir -p "$OUT"
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=${CIRCLE_RENDER_CACHE:-/tmp/cr-cache}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "canvas.sh: the wheels did not install"; exit 1; }
export PYTHONPATH=$PWD:/tmp/site
ICD=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$ICD" ] && export VK_DRIVER_FILES=$ICD
python3 -c "import wgpu; print('wgpu adapter:', wgpu.gpu.request_adapter_sync(power_preference='high-performance').summary)" \
  2>&1 | tail -1
# the Canvas's GPU tests; the course's pictures on the CUDA renderers (DeviceScene changed: the
# light scenes at 64 pixels against the reference) and the array API's GPU tests
timeout 200 python3 -m pytest -q -rfEs --tb=short -p no:cacheprovider tests/canvas/test_canvas_gpu.py > "$OUT/tests.txt" 2>&1
timeout 60 python3 -m pytest -q --tb=short -p no:cacheprovider -m gpu tests/cuda/test_gpu_renderer.py tests/cli/test_hostile.py \
  -k "(64 and not (rand1M or micro2M or rand100k or biglittle or littlebig or snowsingle)) or limits" \
  > "$OUT/course-tests.txt" 2>&1
for f in "$OUT/tests.txt" "$OUT/course-tests.txt"; do
  echo "$(basename "$f"): $(grep -E "passed|failed|error" "$f" | tail -1)"
  grep -E "^(FAILED|ERROR)" "$f" | head -20
done
COMMIT=${CIRCLE_RENDER_COMMIT:-unknown}
timeout 170 python3 -m benchmarks canvas --cases device,oneshot,host,memory --runs 20 -o "$OUT/H100-canvas-$COMMIT.json" \
  > "$OUT/bench.txt" 2>&1
grep -v -E '^[ {}]' "$OUT/bench.txt" | tail -25
python3 - "$OUT/H100-canvas-$COMMIT.json" <<'PY'
import json, sys
goals = json.load(open(sys.argv[1])).get("goals", {})
print(f"{'goal':<32}{'wanted':>10}{'measured':>12}  met")
for name, g in goals.items():
    print(f"{name:<32}{g['goal']:>10}{str(g['measured']):>12}  {g['met']}")
PY

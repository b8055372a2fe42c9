#!/usr/bin/env bash
# One device call: GPU tests of the fast renderer's kernels (4 processes), the stage probe,
# then Nsight Compute on the sparse path's kernels of micro2M at 1024.
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
i=0
for k in "test_kernel_twins" "test_gpu_renderer and (1024 or largest)" "test_gpu_renderer and not (1024 or largest)" \
         "test_assignment_gpu or test_gpu_graph"; do
  timeout 420 python -m pytest -q -m gpu tests -k "$k" -p no:cacheprovider > $OUT/pytest_$i.log 2>&1 &
  i=$((i+1))
done
wait
for f in $OUT/pytest_*.log; do grep -E "passed|failed|error" $f | tail -1; done
grep -h -E "^(FAILED|ERROR)" $OUT/pytest_*.log | head -20
timeout 150 python benchmarks/stage_probe.py --scenes rand1M,micro2M,snowsingle,rand100k --sizes 1024,4096 \
   -o $OUT/probe.json 2>&1 | tail -9
timeout 120 /usr/local/cuda/bin/ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
   --section MemoryWorkloadAnalysis --section InstructionStats --kernel-name regex:"sparse|render_sparse" --csv --page details \
   python benchmarks/profile_kernels.py --scenes micro2M --size 1024 > $OUT/ncu.csv 2>/dev/null; echo "ncu rc=$?"

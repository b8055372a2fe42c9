#!/usr/bin/env bash
# Nsight Compute on the fast renderer's kernels (one launch each), if ncu is installed.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}"; [ -n "$NCU" ] || exit 0
SECTIONS="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis"
for spec in "rand1M 1024" "micro2M 1024" "snowsingle 1024" "micro2M 4096" "rand1M 4096"; do
  set -- $spec
  timeout 150 $NCU $SECTIONS --launch-skip 0 --csv --page details \
     python -m benchmarks profile --scenes $1 --size $2 > $OUT/ncu-$1-$2.csv 2> $OUT/ncu-$1-$2.err
  echo "$1 $2 rc=$? lines=$(wc -l < $OUT/ncu-$1-$2.csv)"
done

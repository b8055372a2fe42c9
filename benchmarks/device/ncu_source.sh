#!/usr/bin/env bash
# Nsight Compute, full set with SASS per instruction, on one kernel per spec: writes
# $OUT/<label>-details.csv and $OUT/<label>-sass.csv. Specs: "scene size kernel-regex label ...".
#   bash benchmarks/device/ncu_source.sh "rand1M 4096 draw_front$ fast4096" "micro2M 1024 sparse_draw_shared$ sparse1024"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
echo "ncu: ${NCU:-none}"; [ -n "$NCU" ] || exit 0
for spec in "$@"; do
  set -- $spec
  rep=/tmp/$4
  timeout 200 $NCU --set full --import-source yes -k "regex:$3" --launch-count 1 -f -o $rep \
    python -m benchmarks profile --scenes $1 --size $2 > /tmp/$4.log 2>&1
  echo "$spec rc=$?"; tail -3 /tmp/$4.log
  $NCU -i $rep.ncu-rep --page details --csv > $OUT/$4-details.csv 2>/dev/null
  $NCU -i $rep.ncu-rep --page source --csv --print-source sass > $OUT/$4-sass.csv 2>/dev/null
  wc -c $OUT/$4-details.csv $OUT/$4-sass.csv
done

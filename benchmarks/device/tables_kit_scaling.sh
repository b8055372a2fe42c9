#!/usr/bin/env bash
# One device call for the records the README and the handout quote: render check under both
# rules (cuda) and for the starter, the assignment kit (ladder and pictures), the scaling
# benchmark, and two more benchmark runs of the scenes with the slimmest margins (the spread).
export PYTHONUNBUFFERED=1 CIRCLE_RENDER_CACHE=/tmp/cr-cache PYTHONPATH=$PWD
mkdir -p /tmp/rec
for rules in cmu cs149; do
  timeout 150 python -m circle_render check -r cuda --rules $rules --logs /tmp/logs-$rules > /tmp/rec/check-$rules.txt 2>/tmp/rec/check-$rules.err
  echo "check $rules exit $?"; tail -14 /tmp/rec/check-$rules.txt
done
timeout 120 python -m circle_render check -r cuda-starter --rules cmu --logs /tmp/logs-starter > /tmp/rec/check-starter.txt 2>/tmp/rec/check-starter.err
echo "check starter exit $?"; tail -14 /tmp/rec/check-starter.txt
timeout 200 python -m benchmarks kit -o /tmp/rec/kit.json --pictures /tmp/rec/kit 2>&1 | tail -38
cp /tmp/logs-starter/*.png /tmp/rec/kit/ 2>/dev/null
timeout 240 python -m benchmarks scaling -o /tmp/rec/scaling.json 2>&1 | tail -26
for k in 1 2; do
  timeout 60 python -m circle_render bench -r cuda --scenes snowsingle,rand10k,snow,micro2M -o /tmp/rec/spread-$k.json 2>/dev/null | tail -4
done
tar czf $OUT/records.tgz -C /tmp rec

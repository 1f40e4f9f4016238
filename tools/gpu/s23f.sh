#!/usr/bin/env bash
# Session 23: the hostile suite five times on this build, with the two scenarios that
# failed in s23c/s23e saying what the ticket and the residency said.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23f} && source tools/gpu/common.sh
for i in 1 2 3 4 5; do
  step 60 hostile-$i "$(bin $T/hostile_gpu)" --include-ignored
  grep -A3 "panicked at tests/common/hostile" $L/hostile-$i.log | head -12
done
exit 0

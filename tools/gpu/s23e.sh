#!/usr/bin/env bash
# Session 23: s23c's hostile run failed two scenarios (close_races_close: a ticket not
# done after close; open_reservation_waits_refused: a read before the axpy it waits
# for). This build and the build before (7ccd492, .gpu/baseline/hostile_gpu),
# alternated, three times each; then the two alone, in turn, on this build.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2 3; do
  step 60 hostile-new-$i "$(bin $T/hostile_gpu)" --include-ignored
  step 60 hostile-old-$i .gpu/baseline/hostile_gpu --include-ignored
done
for i in 1 2; do
  step 60 hostile-new-alone-$i "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1 close_races_close open_reservation_waits_refused
done
exit 0

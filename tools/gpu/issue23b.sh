#!/usr/bin/env bash
# Issue 23, second run on two GPUs: the close hang (a pinned free beside another
# device's resident kernel) shown with the deferral off (RESIDENT_PINNED_FREE_NOW=1,
# stacks of the hung process) and gone with it on; the multi-runtime and link tests with
# the forwarder's backlog; the multi-device bench.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue23b.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
M=$(bin $T/multi_gpu)
( sleep 20; for p in $(pgrep -f "multi_gpu.*close_beside_resident"); do echo "== pid $p"; for t in /proc/$p/task/*; do echo "$t $(cat $t/comm) $(cat $t/wchan 2>/dev/null)"; done; command -v gdb >/dev/null && gdb -batch -ex "thread apply all bt 12" -p $p 2>&1 | grep -E "^#|^Thread" | head -80; done > $L/hang-stacks.txt 2>&1 ) &
RESIDENT_PINNED_FREE_NOW=1 step 40 close-hang-deferral-off "$M" --include-ignored --exact close_beside_resident
wait; head -60 $L/hang-stacks.txt
step 300 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 200 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -30
exit 0

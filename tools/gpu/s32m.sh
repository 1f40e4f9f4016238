#!/usr/bin/env bash
# Session 32: the one-task round trip with SPARSE_LOOK on by default (new) against
# HEAD's default (old), alternated ABBA twice (s32l had one of each: 5.99 against 5.47).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32m} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
B=.gpu/baseline; N=$(bin .gpu/benches/latency)
for p in "old1 $B/latency-old" "new1 $N" "new2 $N" "old2 $B/latency-old" "old3 $B/latency-old" "new3 $N"; do set -- $p
  step 60 latency-$1 $2 --bench --noplot; grep -E "relay\): submit \+ (wait|await)" $L/latency-$1.log | grep -v Bench | head -3
done
exit 0

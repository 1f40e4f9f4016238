#!/usr/bin/env bash
# Session 26: compute-sanitizer memcheck and synccheck over the whole gpu suite on the
# final code (new device code: compact runs' reads and widening, the relay's address).
# Errors on cuFuncGetParamInfo (an API probe that fails by design) are known (s17j).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
export RESIDENT_TIME_SCALE=20 RESIDENT_BUFFER_ARENA_MB=3072
for tool in memcheck synccheck; do
  step 280 $tool-gpu compute-sanitizer --tool $tool --error-exitcode 9 "$(bin $T/gpu)" --include-ignored --test-threads=1
  grep -E "^========= (Invalid|Program hit|Race|Barrier|ERROR)" $L/$tool-gpu.log | sort | uniq -c | head
done
exit 0

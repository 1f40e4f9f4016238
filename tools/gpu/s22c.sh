#!/usr/bin/env bash
# Issue 22, session 22, second call: s22b again with the relay's clock read every 16th
# poll only (per poll it cost 0.2-0.6 us of round trip in s22b) and a 500 us gap, and
# the test keeping the kernel resident until the other context runs.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
cublas_env
step 120 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1 --nocapture
grep -E "alone .*first slice|exits of 20" $L/residency.log | head -5
latency_ab 3
{
  python3 tools/gpu/neighbour.py 3 "alone"
  beside_hold auto 0 "idle runtime, default"
  beside_hold auto 25 "busy 25%, default"
  beside_hold auto 50 "busy 50%, default"
  beside_hold always 25 "busy 25%, always"
  python3 tools/gpu/neighbour.py 3 "alone again"
} > $L/neighbour.log 2>&1
cat $L/neighbour.log
[ -n "${OUT:-}" ] && tar czf "$OUT/$(basename "$L").tgz" -C "$(dirname "$L")" "$(basename "$L")"
exit 0

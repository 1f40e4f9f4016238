#!/usr/bin/env bash
# Issue 22, session 22: `Residency::Auto` now yields to another context (the relay
# times its polls; a gap of > 100 us is a time slice another context took, and then
# the kernel leaves as soon as the queue drains). Measures:
# - residency_gpu, with yields_to_another_context (a second context in the process);
# - the one-task round trip old (0655557, .gpu/baseline/latency-old) / new alternated
#   (the relay's poll reads %globaltimer now);
# - a neighbour process's GEMM and add beside a runtime under the default, idle and
#   busy 25% / 50% (tools/gpu/neighbour.py), with Always and WhenDrained for reference;
# - the partition bench's cuBLAS cold start inside with_kernel_out.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
cublas_env
step 120 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1 --nocapture
grep -E "alone .*first slice|exits of 20" $L/residency.log | head -5
latency_ab 2
{
  python3 tools/gpu/neighbour.py 3 "alone"
  beside_hold auto 0 "idle runtime, default"
  beside_hold auto 25 "busy 25%, default"
  beside_hold auto 50 "busy 50%, default"
  beside_hold drained 25 "busy 25%, when drained"
  beside_hold always 25 "busy 25%, always"
  python3 tools/gpu/neighbour.py 3 "alone again"
} > $L/neighbour.log 2>&1
cat $L/neighbour.log
[ -n "${OUT:-}" ] && tar czf "$OUT/$(basename "$L").tgz" -C "$(dirname "$L")" "$(basename "$L")"
step 200 partition-bench "$(bin .gpu/benches/partition)" --bench --noplot
grep -E "first cuBLAS|relaunched|rest stream|alone" $L/partition-bench.log | head -12
exit 0

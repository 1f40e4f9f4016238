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
for i in 1 2; do
  step 45 latency-old-$i .gpu/baseline/latency-old --bench --noplot
  grep -E "relay\): submit \+ wait|first task after" $L/latency-old-$i.log | head -2
  step 45 latency-new-$i "$(bin .gpu/benches/latency)" --bench --noplot
  grep -E "relay\): submit \+ wait|first task after" $L/latency-new-$i.log | head -2
done
H=$(ls .gpu/examples/hold_gpu* | grep -v '\.d$' | head -1)
nb() { # policy busy label
  $H "$1" 9 "$2" > /tmp/hold.log 2>&1 & local pid=$!
  sleep 2
  python3 tools/gpu/neighbour.py 3 "$3"
  wait $pid; tail -1 /tmp/hold.log
}
{
  python3 tools/gpu/neighbour.py 3 "alone"
  nb auto 0 "idle runtime, default"
  nb auto 25 "busy 25%, default"
  nb auto 50 "busy 50%, default"
  nb drained 25 "busy 25%, when drained"
  nb always 25 "busy 25%, always"
  python3 tools/gpu/neighbour.py 3 "alone again"
} > $L/neighbour.log 2>&1
cat $L/neighbour.log
[ -n "${OUT:-}" ] && tar czf "$OUT/$(basename "$L").tgz" -C "$(dirname "$L")" "$(basename "$L")"
step 200 partition-bench "$(bin .gpu/benches/partition)" --bench --noplot
grep -E "first cuBLAS|relaunched|rest stream|alone" $L/partition-bench.log | head -12
exit 0

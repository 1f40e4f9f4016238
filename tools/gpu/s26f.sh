#!/usr/bin/env bash
# Session 26, last call: the review's fix (compact runs in the second half of their own
# slots). Its regression test on the build before the fix (.gpu/b/gpu-old: records
# packed from the run's first slot) and after, three times each; every GPU suite and
# the soak on the final code; memcheck on the compact tests; the host-fed batch and
# the round trips for the figures.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2 3; do
  step 60 regression-old-$i .gpu/b/gpu-old --include-ignored --exact compact_runs_beside_next_lap_writers
  grep -E "marks not set|panicked" $L/regression-old-$i.log | head -2
  step 60 regression-new-$i "$(bin $T/gpu)" --include-ignored --exact compact_runs_beside_next_lap_writers
done
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "tasks compact" $L/gpu.log
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
SOAK_SECS=60 step 100 soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
tail -2 $L/soak.log
RESIDENT_TIME_SCALE=20 RESIDENT_BUFFER_ARENA_MB=3072 step 150 memcheck-compact compute-sanitizer --tool memcheck --error-exitcode 9 "$(bin $T/gpu)" --include-ignored --test-threads=1 --exact compact_runs_beside_next_lap_writers
grep -E "ERROR SUMMARY|test result" $L/memcheck-compact.log
DISPATCH_HOST=short step 150 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed, |noop batch split|into pinned" $L/dispatch.log
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "time:" $L/latency.log | head -12
exit 0

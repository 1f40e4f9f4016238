#!/usr/bin/env bash
# Next session's first call (on two GPUs), for what session 21 could not run:
# - the one-task round trip against the build before the peer path (session 21's
#   s21k, never run, is folded in here) (0655557: stage its
#   latency bench as .gpu/baseline/latency-old, built in a worktree with its own
#   CARGO_TARGET_DIR), old and new alternated: is the 0.5 us gone now that the relay
#   reads `peers` every 16th poll?
# - residency_gpu's kernel_out (Runtime::with_kernel_out) and the partition suite;
# - the main suites (the relay's device code changed);
# - the multi suite and bench on the last build (warp-wide moves + the `peers` read).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env; cublas_env
latency_ab 2
step 120 gpu "$(bin $T/gpu)" --include-ignored
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 90 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 90 faults "$(bin $T/gpu_faults)" --include-ignored --test-threads 1
step 90 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 90 partition "$(bin $T/partition)" --include-ignored --test-threads 1
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 90 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]|^multi/" $L/multi-bench.log | head -30
exit 0

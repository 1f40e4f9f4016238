#!/usr/bin/env bash
# Session 21, issue 23's peer path after review: the multi suite, the multi bench (peer
# latency and burst rows), the example on both paths and its GPU test.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
step 90 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -40
step 60 example "$T/multi-gpu"
tail -4 $L/example.log
for f in $T/two_stage-*; do step 60 example-test "$f" --include-ignored --nocapture; done
grep -E "two GPUs|test result" $L/example-test.log
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
step 90 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "exit|submit \+ wait" $L/latency.log | head -8
exit 0

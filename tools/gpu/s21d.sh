#!/usr/bin/env bash
# Session 21, on two GPUs: the link forwarder's lock-free counts against the build
# before them (multi bench, old and new alternated, same call), the partition tests and
# bench after the review's fixes (on device 0), and the latency bench (first task after
# an exit, with the submit call's share).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env; cublas_env
NEW=$(bin .gpu/benches/multi)
for i in 1 2; do
  step 60 multi-old-$i .gpu/baseline/multi-old --bench --noplot
  grep -A3 "follow-up" $L/multi-old-$i.log
  step 60 multi-new-$i "$NEW" --bench --noplot
  grep -A3 "follow-up" $L/multi-new-$i.log
done
step 60 multi "$(multi_bin)" --include-ignored --test-threads 1
step 120 partition "$(bin $T/partition)" --include-ignored --test-threads 1 --nocapture
grep -E "^test .*(ok|FAILED)$|panicked at" $L/partition.log | head -20
step 200 partition-bench "$(bin .gpu/benches/partition)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|Found|outlier|^  [0-9]" $L/partition-bench.log | head -40
step 90 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "exit|submit \+ wait" $L/latency.log | head -12
exit 0

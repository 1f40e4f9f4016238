#!/usr/bin/env bash
# Issue 23, fourth run on two GPUs: pushes own their position by an atomic add (the CAS
# over a bus read made the outbox crawl), then the multi tests and the multi bench.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 250 multi "$(bin $T/multi_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
grep -E "links_exactly_once [0-9]" $L/multi.log | tail -3
step 150 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/multi-bench.log | head -30
step 100 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
exit 0

#!/usr/bin/env bash
# Session 25, second call (one H100/H200): the copy path by stream memory operations
# (host/cuda/memops.rs). Does the driver take them through cudarc now (the backend's
# layout line says)? The gpu suite (the copy-path tests publish by stream writes now;
# mixed_batch_sizes_copies_only by copies); the one-task round trip, copy path with
# and without stream writes in the same binary, twice.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "copy path:" $L/gpu.log | sort | uniq -c
for i in 1 2; do
  step 90 latency-$i "$(bin .gpu/benches/latency)" --bench --noplot
  grep -E "^persistent \((relay|copy|copy, no memops)\): submit|copy path" $L/latency-$i.log
done
exit 0

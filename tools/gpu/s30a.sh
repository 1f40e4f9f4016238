#!/usr/bin/env bash
# Session 30: partner threads for mid-size batches (host/queue/partners.rs). The GPU
# suites, then the streaming rows with partners (default) and without
# (STREAMING_PARTNERS=0), same binary, ABBAAB.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s30a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nproc | tee $L/nproc.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
ROWS='persistent_(1_threads/(256|1024)|4_threads/(256|1024))$'
b=$(bin .gpu/benches/streaming)
i=0
for v in on off off on on off; do
  i=$((i+1))
  if [ $v = off ]; then STREAMING_PARTNERS=0 stream_run streaming-$i-$v $b "$ROWS"; else stream_run streaming-$i-$v $b "$ROWS"; fi
done
exit 0

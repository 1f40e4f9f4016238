#!/usr/bin/env bash
# Correctness on a GPU: the suite, the stream tests (one at a time), the fused-op
# tests, the fault tests (each fault in a child process). Logs in /tmp/logs-check.
cd "$(dirname "$0")/../.." && L=/tmp/logs-check && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/device.txt"
step 240 gpu $T/gpu-* --include-ignored
step 120 streams $T/streams_gpu-* --include-ignored --test-threads=1
step 150 nn $T/fused_ops_gpu-* --include-ignored
step 300 faults $T/gpu_faults-* --include-ignored --test-threads=1 --nocapture

#!/usr/bin/env bash
# Session 24, third call (one H100/H200): where a producer's time goes. The streaming
# bench built with the `phase-timing` feature (.gpu/prof/streaming) prints, per row, the
# submitting threads' time per phase of `submit` and of the blocking waits
# (host/queue/phases.rs). Then the plain build's rows for comparison (the stamps' cost).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 150 streaming-phases .gpu/prof/streaming --bench --noplot
grep -E "^persistent|^axpy" $L/streaming-phases.log
grep -A12 "^phases" $L/streaming-phases.log | grep -v "^--"
step 120 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent|^axpy" $L/streaming.log
exit 0

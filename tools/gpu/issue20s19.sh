#!/usr/bin/env bash
# Issue 20, session 19: checks monomorphized per task set (no indirect call per task).
# Streaming (one producer, batch 1024, is bound by the host's per-task check + stage)
# and the host-fed 20k batch, with the gpu suite first.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue20s19.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue20s19} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 host-passes "$(bin $T/resident)" timing --ignored --nocapture --test-threads 1
grep -E "us$|noops" $L/host-passes.log
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
step 120 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "persistent,|launch|Graph|axpy 16Ki|M tasks" $L/streaming.log | tail -9
DISPATCH_HOST=1 step 150 dispatch-host "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "noop batch split|^summary|^variant|^host-fed|^reservation|^memcpy|^staging" $L/dispatch-host.log | head -24
exit 0

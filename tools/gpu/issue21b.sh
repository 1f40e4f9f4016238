#!/usr/bin/env bash
# Issue 21's second GPU run (after one runtime per device, `DeviceInUse`): the hostile
# scenarios and the gpu suite, then issue 20's host-fed rows (DISPATCH_HOST) and
# streaming, on the build with the issue-21 changes.
#   here: tools/gpu/pack.sh; there: bash tools/gpu/issue21b.sh [log-name]   (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue21b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $L/device.txt
step 240 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked" -A3 $L/hostile.log | grep -v "^--" | head -60
step 120 gpu "$(bin $T/gpu)" --include-ignored --test-threads 1
grep -B2 -A12 "panicked" $L/gpu.log | head -30
DISPATCH_HOST=1 step 150 dispatch-host "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "noop batch split|^summary|^variant|^relay|^staging|^host-fed|^reservation|^list|^one launch|^CUDA Graph|^device copy|^memcpy" $L/dispatch-host.log
step 120 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "persistent,|launch|Graph|axpy 16Ki|M tasks" $L/streaming.log | tail -14
exit 0

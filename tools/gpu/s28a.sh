#!/usr/bin/env bash
# Session 28: where one and four producers' batches go now (phase-timing build of the
# streaming bench), the plain streaming bench, and the 20k timeline with helpers asleep
# and lingering 1 ms.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s28a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 streaming-phases .gpu/baseline/streaming-phases --bench --noplot
grep -E "^persistent|^phases|^ " $L/streaming-phases.log | head -120
step 150 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent" $L/streaming.log
DISPATCH_HOST=timeline step 60 timeline "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^timeline" $L/timeline.log
DISPATCH_SPIN_US=1000 DISPATCH_HOST=timeline step 60 timeline-spin "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^timeline" $L/timeline-spin.log
exit 0

#!/usr/bin/env bash
# Session 27: the 20k batch's completion timeline as the host sees it (an observer
# thread on `Runtime::completed`): submit, submit_pipelined and the resident list.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s27c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for i in 1 2; do
  DISPATCH_HOST=timeline step 60 timeline-$i "$(bin .gpu/benches/dispatch)" --bench --noplot
  grep -E "^timeline" $L/timeline-$i.log
done
exit 0

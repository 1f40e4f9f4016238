#!/usr/bin/env bash
# Session 31: the 20k host-fed rows (pipelined) and the resident list, the session's
# start (old) against the final code (new), one each.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31g} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
DISPATCH_HOST=pipe step 80 pipe-old .gpu/baseline/dispatch-old --bench --noplot
grep -E "^(host-fed pipelined|list), relay runs \(defaults\)" $L/pipe-old.log
DISPATCH_HOST=pipe step 80 pipe-new "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^(host-fed pipelined|list), relay runs \(defaults\)" $L/pipe-new.log
exit 0

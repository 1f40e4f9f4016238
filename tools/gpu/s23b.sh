#!/usr/bin/env bash
# Session 23, issue 20: a large host batch checked as it is staged (one pass on the
# helpers, after the reservation) and streaming stores into the host ring, against the
# build before (7ccd492, staged as .gpu/baseline/*) alternated in one call; the host's
# passes (validate, stage with ordinary and streaming stores) on this machine's host.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 60 host-passes .gpu/tests/resident --ignored --nocapture host_passes nt_stage
grep -E " us" $L/host-passes.log
sum() { grep -E "host-fed|split" "$L/$1.log" | head -24; }
DISPATCH_HOST=short step 90 dispatch-new-1 .gpu/benches/dispatch --bench --noplot; sum dispatch-new-1
DISPATCH_HOST=1 step 90 dispatch-old .gpu/baseline/dispatch --bench --noplot; sum dispatch-old
DISPATCH_HOST=short step 90 dispatch-new-2 .gpu/benches/dispatch --bench --noplot; sum dispatch-new-2
step 120 streaming-old .gpu/baseline/streaming --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/streaming-old.log | tail -14
step 120 streaming-new .gpu/benches/streaming --bench --noplot
grep -vE "^Benchmarking|^\s*$|time:|Found|outlier|^  [0-9]" $L/streaming-new.log | tail -14
exit 0

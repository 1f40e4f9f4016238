#!/usr/bin/env bash
# Session 23, issue 20, second build: a large batch's checks, then its staging and
# commits piece by piece, in one pass of the helpers (the workers start on the first
# piece while the rest is staged); streaming stores only for runs longer than an
# inline batch. The suites that submit large batches, then the host-fed dispatch rows
# against the build before (7ccd492, .gpu/baseline/dispatch) alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 90 gpu "$(bin $T/gpu)" --include-ignored
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 custom "$(bin $T/custom_task_gpu)" --include-ignored --test-threads 1
step 60 fused "$(bin $T/fused_ops_gpu)" --include-ignored --test-threads 1
sum() { grep -E "host-fed|split|into pinned" "$L/$1.log" | head -24; }
DISPATCH_HOST=short step 90 dispatch-new-1 "$(bin .gpu/benches/dispatch)" --bench --noplot; sum dispatch-new-1
DISPATCH_HOST=1 step 90 dispatch-old .gpu/baseline/dispatch --bench --noplot; sum dispatch-old
DISPATCH_HOST=short step 90 dispatch-new-2 "$(bin .gpu/benches/dispatch)" --bench --noplot; sum dispatch-new-2
exit 0

#!/usr/bin/env bash
# Issue 20 (the host path), on the GPU machine after ../shared/tools/gpu-pack (binaries
# renamed to their target names): the GPU suites, then the host-fed dispatch rows
# (DISPATCH_HOST: runs over the host ring published by the relay, against staging +
# copies), latency (inline, run, copy; blocking, parking executor, tokio), streaming.
#   bash tools/gpu/issue20.sh [log-name]       (carry [".gpu"])
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue20} && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader | tee $L/device.txt
lscpu | grep "Model name" | tee -a $L/device.txt; nproc | tee -a $L/device.txt
[ -x $T/resident_lib ] && step 60 host-passes $T/resident_lib timing --ignored --nocapture --test-threads 1 && grep -E "us$" $L/host-passes.log
step 240 gpu $T/gpu --include-ignored --test-threads 1
grep -B2 -A12 "panicked" $L/gpu.log | head -40
for t in gpu_faults fused_ops_gpu custom_task_gpu streams_gpu; do [ -x $T/$t ] && step 150 $t $T/$t --include-ignored --test-threads 1; done
DISPATCH_HOST=1 step 200 dispatch-host .gpu/benches/dispatch --bench --noplot
grep -E "noop batch split|^summary|^variant|^relay|^staging|^host-fed|^reservation|^list|^one launch|^CUDA Graph|^device copy|^axpy loop" $L/dispatch-host.log
step 100 latency .gpu/benches/latency --bench --noplot
grep -E "^persistent|^  \(|^launch|^graph" $L/latency.log | head -16
step 150 streaming .gpu/benches/streaming --bench --noplot
grep -E "persistent,|launch|Graph|axpy 16Ki|M tasks" $L/streaming.log | tail -12
exit 0

#!/usr/bin/env bash
# Session 24, fourth call (one H100/H200): software prefetch in the batch check (the
# tasks streamed from user memory are cold: s24c found the check at 9.4 ns a noop
# against 4 ns in cache). Staged in .gpu/b: the build before (8061577) as *-base, the
# prefetch 16 tasks ahead (*-p16), 32 ahead (streaming-p32), and p16 with the
# `phase-timing` feature (streaming-p16-phases), all in one call.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
for r in base p16 p32 p16-phases; do
  step 120 streaming-$r .gpu/b/streaming-$r --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
grep -A12 "^phases" $L/streaming-p16-phases.log | grep -E "^phases|check|stage|pass"
for r in p16 base; do
  DISPATCH_HOST=short step 90 dispatch-$r .gpu/b/dispatch-$r --bench --noplot
  grep -E "host-fed|split|into pinned" "$L/dispatch-$r.log" | head -24
done
exit 0

#!/usr/bin/env bash
# Session 24, second call (one H100/H200): the one-pass large batch done right (checks
# after the reservation, pieces with room staged in the same pass, the rest published
# by the caller as room comes, a voided batch on refusal or panic), against session
# 23's final code (f0750c6, s24a's build) staged as .gpu/baseline/{streaming,dispatch}.
# Also the gpu suite with large_batch_signal_releases_a_waiter sized to the run table.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 120 gpu "$(bin $T/gpu)" --include-ignored
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
for r in new old new2; do
  b="$(bin .gpu/benches/streaming)"; [ $r = old ] && b=.gpu/baseline/streaming
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
sum() { grep -E "host-fed|split|into pinned" "$L/$1.log" | head -24; }
for r in new old; do
  b="$(bin .gpu/benches/dispatch)"; [ $r = old ] && b=.gpu/baseline/dispatch
  DISPATCH_HOST=short step 90 dispatch-$r "$b" --bench --noplot; sum dispatch-$r
done
exit 0

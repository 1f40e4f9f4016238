#!/usr/bin/env bash
# Session 26: compact 32-byte records (runs over the host ring) on a GPU. The gpu suite
# (its new compact_and_full_runs_exactly_once), hostile; the host-fed 20k batch
# (DISPATCH_HOST=short: "relay runs" vs "full 64-byte records", alternated); streaming
# compact vs full.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --nocapture
grep -E "copy path's tail by|tasks compact|worker warps" $L/gpu.log | sort | uniq -c | head
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
DISPATCH_HOST=short step 150 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed, |noop batch split|into pinned" $L/dispatch.log
for r in compact full; do
  if [ $r = full ]; then export STREAMING_FULL_RECORDS=1; else unset STREAMING_FULL_RECORDS; fi
  step 120 streaming-$r "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0

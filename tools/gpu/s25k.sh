#!/usr/bin/env bash
# Session 25, call k (one H100/H200): the large batch's helpers stay awake 50 us after
# each pass (RuntimeConfig::submit_spin, on by default on CUDA where the host has the
# cores) against helpers that sleep between passes (submit_spin zero, the behaviour
# before), in the same binaries: the gpu suite; DISPATCH_HOST=short (rows "helpers
# sleep between passes"); the pass timed apart (phase-timing build); streaming with and
# without (STREAMING_HELPERS_SLEEP=1).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25k} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored
DISPATCH_HOST=short step 150 dispatch "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^host-fed, |noop batch split" $L/dispatch.log
DISPATCH_HOST=short step 150 dispatch-phases .gpu/b/dispatch-phases --bench --noplot
grep -E "^host-fed, " $L/dispatch-phases.log
grep -A14 "phases, host-fed noop, relay runs (defaults)\|phases, host-fed noop, relay runs, helpers sleep between passes:" $L/dispatch-phases.log | grep -E "phases|pass"
for r in spin sleep; do
  if [ $r = sleep ]; then export STREAMING_HELPERS_SLEEP=1; else unset STREAMING_HELPERS_SLEEP; fi
  step 120 streaming-$r "$(bin .gpu/benches/streaming)" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0

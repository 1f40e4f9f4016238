#!/usr/bin/env bash
# For session 24's first call (one H100/H200): session 23's final code never ran on a
# GPU whole (device time ran out). The suites (gpu has the new
# large_batch_signal_releases_a_waiter), the contended hostile suite three times (the
# zeroing fix), and the host path's figures: streaming and DISPATCH_HOST=short against
# the build before session 23 (7ccd492) staged as .gpu/baseline/{streaming,dispatch}
# (build it in a worktree with its own CARGO_TARGET_DIR).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 90 gpu "$(bin $T/gpu)" --include-ignored
for i in 1 2 3; do step 60 hostile-$i "$(bin $T/hostile_gpu)" --include-ignored; done
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
for r in new old; do
  b="$(bin .gpu/benches/streaming)"; [ $r = old ] && b=.gpu/baseline/streaming
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
sum() { grep -E "host-fed|split|into pinned" "$L/$1.log" | head -24; }
DISPATCH_HOST=short step 90 dispatch-new "$(bin .gpu/benches/dispatch)" --bench --noplot; sum dispatch-new
DISPATCH_HOST=1 step 90 dispatch-old .gpu/baseline/dispatch --bench --noplot; sum dispatch-old
exit 0

#!/usr/bin/env bash
# Session 23: tickets registered without the completion scanner's lock (a queue of
# their own that every scan takes first): streamed tiny tasks against the build before
# (b2a4f18, .gpu/baseline/streaming) alternated; the gpu and hostile suites.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23k} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 90 gpu "$(bin $T/gpu)" --include-ignored
step 60 hostile "$(bin $T/hostile_gpu)" --include-ignored
grep -E "^failures:|^    [a-z_]+$" $L/hostile.log | head -4
for r in new-1 old new-2; do
  b=.gpu/benches/streaming; [ $r = old ] && b=.gpu/baseline/streaming
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0

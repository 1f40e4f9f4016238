#!/usr/bin/env bash
# Session 23, issue 20: streamed tiny tasks (1 and 4 producers, batches of 256, 1024,
# 4096) on this build and on the build before (7ccd492), alternated, and the host's
# passes on this machine.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 60 host-passes "$(bin .gpu/tests/resident)" --ignored --nocapture host_passes nt_stage
grep -E " us" $L/host-passes.log
for r in new-1 old new-2; do
  b=$(bin .gpu/benches/streaming); [ $r = old ] && b=.gpu/baseline/streaming
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
exit 0

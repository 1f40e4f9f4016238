#!/usr/bin/env bash
# Session 23: a set's declaration dispatch inlined into the batch check (it was a call
# per task): streamed tiny tasks and the host-fed batch against the build before
# (2280718, .gpu/baseline/*) alternated in one call, and the host's passes.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23j} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 60 host-passes .gpu/tests/resident --ignored --nocapture host_passes nt_stage
grep -E " us" $L/host-passes.log
for r in new-1 old new-2; do
  b=.gpu/benches/streaming; [ $r = old ] && b=.gpu/baseline/streaming
  step 120 streaming-$r "$b" --bench --noplot
  grep -E "^persistent|^axpy" $L/streaming-$r.log
done
sum() { grep -E "host-fed|split|into pinned" "$L/$1.log" | head -24; }
DISPATCH_HOST=short step 90 dispatch-new .gpu/benches/dispatch --bench --noplot; sum dispatch-new
DISPATCH_HOST=short step 90 dispatch-old .gpu/baseline/dispatch --bench --noplot; sum dispatch-old
exit 0

#!/usr/bin/env bash
# On the GPU machine: this build's dispatch and latency benches and fused conv + BN
# example (staged in .gpu/benches, .gpu/examples) against another build's (the same
# three, stripped, as .gpu/before/{dispatch,latency,fused_conv_bn}), alternated
# old-new-new-old in one call. Dispatch: the 20k host-fed, list and rival rows of its
# summary; latency: the one-task round trip; logs in $L.
#   bash tools/gpu/ab.sh [LOGDIR]
cd "$(dirname "$0")/../.." && L=${1:-/tmp/logs-ab} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
D=$(bin .gpu/benches/dispatch); O=.gpu/before/dispatch
for p in "old1 $O" "new1 $D" "new2 $D" "old2 $O"; do set -- $p
  step 120 dispatch-$1 $2 --bench --noplot
  grep -E "^(host-fed pipelined|list), defaults|^one launch over the table" $L/dispatch-$1.log | cut -c1-150
done
LN=$(bin .gpu/benches/latency); LO=.gpu/before/latency
for p in "old1 $LO" "new1 $LN" "new2 $LN" "old2 $LO"; do set -- $p
  step 60 lat-$1 $2 --bench --noplot
  grep -E "^persistent \(relay\): submit \+ wait" $L/lat-$1.log
done
step 90 conv-old .gpu/before/fused_conv_bn
step 90 conv-new "$(ls .gpu/examples/fused_conv_bn* | grep -v '\.d$' | head -1)"
grep -h "fused: one submission" $L/conv-old.log $L/conv-new.log
exit 0

#!/usr/bin/env bash
# The benches and examples whose figures docs/benchmarks.md records: dispatch (with the
# no-dispatch ceiling), latency, scaling, the fused-op examples. Logs in /tmp/logs-bench.
# Usage: bench.sh [step...] (default: all; names as below).
cd "$(dirname "$0")/../.." && L=/tmp/logs-bench && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/device.txt"
WANT="$*"
on() { [ -z "$WANT" ] || [[ " $WANT " == *" $1 "* ]]; }
on dispatch && { step 300 dispatch .gpu/benches/dispatch-* --bench; sed -n '/^summary/,$p' "$L/dispatch.log" | head -40; }
on latency && step 150 latency .gpu/benches/latency-* --bench
on scaling && step 150 scaling .gpu/benches/scaling-* --bench
on conv-bn && step 60 conv-bn .gpu/examples/fused_conv_bn 21
on conv-bn-sweep && step 90 conv-bn-sweep .gpu/examples/fused_conv_bn sweep 21
on pipeline && step 60 pipeline .gpu/examples/pipeline 4194304
on rnn && step 120 rnn .gpu/examples/persistent_rnn 2000
exit 0

#!/usr/bin/env bash
# The benches and examples whose figures docs/benchmarks.md records: dispatch (with the
# no-dispatch ceiling), latency, the fused-op examples. Logs in /tmp/logs-bench.
cd "$(dirname "$0")/../.." && L=/tmp/logs-bench && source tools/gpu/common.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$L/device.txt"
step 300 dispatch .gpu/benches/dispatch-* --bench
sed -n '/^summary/,$p' "$L/dispatch.log" | head -30
step 150 latency .gpu/benches/latency-* --bench
step 150 scaling .gpu/benches/scaling-* --bench
step 60 conv-bn .gpu/examples/fused_conv_bn 21
step 90 conv-bn-sweep .gpu/examples/fused_conv_bn sweep 21
step 60 pipeline .gpu/examples/pipeline 4194304
step 120 rnn .gpu/examples/persistent_rnn 2000

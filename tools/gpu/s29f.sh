#!/usr/bin/env bash
# Session 29: the latency rows, HEAD against the session's start (4466b86), ABBA: s29e's
# one pair had the relay row 0.7 us faster and the run and copy rows 0.9-1.7 us slower.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s29f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
i=0
for v in base new new base; do
  i=$((i+1))
  b=.gpu/baseline/latency-base; [ $v = new ] && b=$(bin .gpu/benches/latency)
  step 60 latency-$i-$v $b --bench --noplot
  grep -E "^persistent \((relay|run|copy)\): submit \+ (wait|await) " $L/latency-$i-$v.log
done
exit 0

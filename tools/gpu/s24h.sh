#!/usr/bin/env bash
# Session 24, after s24g: the one-task latency of the blocking wait that skips its scan
# once its ticket is resolved, against f90eb40 (.gpu/b/latency-base), alternated twice
# (s24g's p90 of the blocking wait read 8.7-12.5 against 6.0 µs in one base run).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24h} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
for r in base new base2 new2; do
  b="$(bin .gpu/benches/latency)"; [ ${r%2} = base ] && b=.gpu/b/latency-base
  step 60 latency-$r "$b" --bench --noplot
  grep -E "^persistent \((relay|copy)\): submit" $L/latency-$r.log
done
exit 0

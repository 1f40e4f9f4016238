#!/usr/bin/env bash
# Session 26: staging by affinity (each thread stages the pieces over the parts it
# checked first). Phase-timing builds of the dispatch bench before (.gpu/b/dispatch-
# phases-old, 7bdc260) and after, alternated; the gpu suite; streaming.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored
for v in old new old new; do
  b=.gpu/b/dispatch-phases-old; [ $v = new ] && b=.gpu/b/dispatch-phases
  n=$v; [ -e $L/dispatch-$v.log ] && n=$v-2
  DISPATCH_HOST=short step 200 dispatch-$n $b --bench --noplot
  grep -E "^host-fed, relay runs|noop batch split" $L/dispatch-$n.log | grep -v "sleep\|ordinary\|copies"
  grep -A14 "phases, host-fed noop, relay runs (defaults)" $L/dispatch-$n.log | grep -E "pass"
done
step 120 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent|^axpy" $L/streaming.log
exit 0

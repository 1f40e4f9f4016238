#!/usr/bin/env bash
# Issue 23, third run on two GPUs: the link tests with progress lines (a stall in
# links_exactly_once on the second run), small, one way, both ways; the threads' wait
# channels if one hangs.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-issue23c} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
M=$(bin $T/multi_gpu)
for t in links_exactly_once_small links_one_way links_exactly_once; do
  ( sleep 50; for p in $(pgrep -f "multi_gpu.*--exact $t"); do echo "== pid $p"; for th in /proc/$p/task/*; do echo "$th $(cat $th/comm) $(cat $th/wchan 2>/dev/null) $(awk '{print $14, $15}' $th/stat)"; done; done > $L/$t-threads.txt 2>&1 ) &
  step 130 $t "$M" --include-ignored --exact $t --nocapture
  grep -E "links_exactly_once [0-9]|panicked|^test " $L/$t.log | head -30
  wait; cat $L/$t-threads.txt | head -40
done
exit 0

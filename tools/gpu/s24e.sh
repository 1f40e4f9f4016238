#!/usr/bin/env bash
# Session 24, fifth call (one H100/H200): is the producer lock's hold under four
# producers the ticket's registration, which takes the completion scanner's lock? Both
# builds with `phase-timing` (a `register` phase apart): .gpu/b/streaming-lock
# (registration under the scan's lock, as shipped) and streaming-queue (session 23's
# registration queue, 5e1f87d, restored), alternated.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s24e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
for r in lock queue lock2 queue2; do
  step 120 streaming-$r .gpu/b/streaming-${r%2} --bench --noplot
  grep -E "^persistent" $L/streaming-$r.log
  grep -A13 "^phases, 4 thread(s) x 256" $L/streaming-$r.log | grep -E "lock|reserve|register|room|commit|wait"
done
exit 0

#!/usr/bin/env bash
# Session 21: the peer path again (inboxes from a pool that grants the pusher access),
# the multi suite and the multi bench's peer row.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s21f} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nccl_env
M=$(multi_bin)
for t in peer_link_errors peer_links_exactly_once_small peer_links_exactly_once; do
  step 60 $t "$M" --include-ignored --exact $t --nocapture
done
step 60 multi-bench "$(bin .gpu/benches/multi)" --bench --noplot
grep -A6 "follow-up" $L/multi-bench.log; grep "peer link" $L/multi-bench.log
step 150 multi "$M" --include-ignored --test-threads 1
grep -E "^test .*(ok|FAILED)$|panicked at" $L/multi.log | head -20
exit 0

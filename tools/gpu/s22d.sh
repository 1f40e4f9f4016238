#!/usr/bin/env bash
# Session 22, on two GPUs:
# - a device-timer breakdown of the peer follow-up (issue 23): a trace build of the
#   multi bench (.gpu/trace/multi: printf stamps at the push, the receiver's move, its
#   done add and its mirror; built from tools/gpu/trace-peer.patch), both directions,
#   read by tools/gpu/trace_peer.py;
# - NCCL between ranks in processes of their own (tests/nccl_ranks.rs): started by the
#   test itself, then by torchrun;
# - streams_gpu (s22a ran it without --test-threads 1), residency_gpu, the multi suite
#   and the dispatch summary on the final build.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s22d} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nvidia-smi topo -m | head -4 > $L/topo.txt
nccl_env
TRACE_PEER=1 step 90 trace .gpu/trace/multi --bench --noplot
grep -E "^H " $L/trace.log | head -3
python3 tools/gpu/trace_peer.py < $L/trace.log | tee $L/trace-summary.txt
step 90 nccl-ranks "$(bin $T/nccl_ranks)" --include-ignored --nocapture
grep -E "^rank" $L/nccl-ranks.log
step 120 nccl-torchrun python3 -m torch.distributed.run --nproc-per-node 2 --no-python "$(bin $T/nccl_ranks)" --include-ignored --nocapture
grep -E "^rank|error|Error" $L/nccl-torchrun.log | head -8
step 90 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 90 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
step 150 multi "$(multi_bin)" --include-ignored --test-threads 1
DISPATCH_QUICK=1 step 150 dispatch-quick "$(bin .gpu/benches/dispatch)" --bench --noplot
grep -E "^summary|^variant|^list|^host-fed|^one launch|^CUDA Graph|^device copy" $L/dispatch-quick.log | head -20
exit 0

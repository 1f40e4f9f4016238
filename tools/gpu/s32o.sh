#!/usr/bin/env bash
# Session 32 (s32o: s32n again with finer laps: pass_first_checked, pass_first_staged,
# pass_spawned). Where the host's time goes before a pipelined 20k batch's first piece is
# published (8 µs for axpys with the helpers awake, against 2 for a list): the
# phase-timing build's timelines (new lap: pass_first, from the pass's start to the
# first piece's commit), helpers awake and asleep.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32o} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
P=.gpu/baseline/dispatch-phases
DISPATCH_HOST=timeline DISPATCH_SPIN_US=1000 step 60 tl-awake $P --bench --noplot
DISPATCH_HOST=timeline step 60 tl-asleep $P --bench --noplot
grep -h -A40 "^timeline axpy, submit_pipelined" $L/tl-awake.log | grep -E "pre|lock|reserve|register|pass_|published|done"
exit 0

#!/usr/bin/env bash
# Session 34 (prepared with no device time left; for the next call that has some).
# 1. The GPU suites on HEAD: the device code from 8b100b2 on (TaskCx's `spawned` flag,
#    the look after a push; the custom-task failing-split scenario) has not run on a GPU.
#    Stage first: tools/gpu/quickpack.sh test:gpu test:hostile_gpu, and custom_task_gpu
#    by hand (cargo test --release --no-run -p custom-task --test custom_task_gpu
#    --message-format=json; copy the executable to .gpu/tests/ and strip it).
# 2. benches/floor/read_probe.cu: which read of a host record overlaps a persistent
#    worker's task (plain read-ahead, cp.async, cp.async.bulk, one request for K records),
#    and whether the TMA unit reads mapped host memory at all (its `bad` column).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s34a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
step 200 custom "$(bin $T/custom_task_gpu)" --include-ignored --test-threads=1
step 120 build-probe nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/read_probe benches/floor/read_probe.cu -lpthread
# The SASS of `ahead` (persistent<1>) and `bulk` (persistent<6>): is the read-ahead's load
# issued before the body and the MEMBAR/RED of the completion, its first use after them?
cuobjdump -sass -fun '_Z10persistentILi1EEvPK3RecPKjj' /tmp/read_probe > $L/ahead.sass 2>&1
cuobjdump -sass -fun '_Z10persistentILi6EEvPK3RecPKjj' /tmp/read_probe > $L/bulk.sass 2>&1
grep -nE "LDG|MEMBAR|RED|ATOM|UBLKCP|SYNCS|LDGSTS|FENCE" $L/ahead.sass | head -40
step 240 read-probe /tmp/read_probe
cat $L/read-probe.log
exit 0

#!/usr/bin/env bash
# Session 26: the host path's floor (benches/floor/host_floor.cu) with 32-byte records
# beside the 64-byte ones, twice: what fewer bytes a task give before the runtime changes.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/host_floor benches/floor/host_floor.cu -lcuda -lpthread 2>&1 | tail -5
for r in a b; do step 200 host-floor-$r /tmp/host_floor; cat $L/host-floor-$r.log; done
exit 0

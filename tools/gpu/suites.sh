#!/usr/bin/env bash
# On the GPU machine, from the repository root, with binaries staged in .gpu/tests
# (tools/gpu/pack.sh, or tools/gpu/quickpack.sh): every GPU suite, each under a
# time limit, logs in $L (default /tmp/logs-suites, tarred into $OUT after each step).
#   bash tools/gpu/suites.sh [LOGDIR]          SOAK_SECS (default 30) for the soak
cd "$(dirname "$0")/../.." && L=${1:-/tmp/logs-suites} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 lies "$(bin $T/lies_gpu)" --include-ignored --test-threads=1
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 120 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
step 150 faults "$(bin $T/gpu_faults)" --include-ignored --test-threads=1
step 150 custom "$(bin $T/custom_task_gpu)" --include-ignored --test-threads=1
step 200 fused "$(bin $T/fused_ops_gpu)" --include-ignored --test-threads=1
step 120 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads=1
step 120 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads=1
step 120 partition "$(bin $T/partition)" --include-ignored --test-threads=1
SOAK_SECS=${SOAK_SECS:-30} step $(( ${SOAK_SECS:-30} + 60 )) soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
exit 0

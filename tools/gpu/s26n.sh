#!/usr/bin/env bash
# Session 26: the suites s26k-m did not run on the final code (the pass restructured
# for submit_pipelined): streams, residency, the soak (60 s).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s26n} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
SOAK_SECS=60 step 100 soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
tail -3 $L/soak.log
exit 0

#!/usr/bin/env bash
# Session 33: the custom-task example's GPU scenarios (custom_task_gpu, staged by hand:
# cargo test --release --no-run -p custom-task --test custom_task_gpu), with the new
# children_join_by_counter (SumSplit, 3000 waiting Totals).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s33e} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 200 custom "$(bin .gpu/tests/custom_task_gpu)" --include-ignored --test-threads=1
exit 0

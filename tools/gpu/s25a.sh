#!/usr/bin/env bash
# Session 25, first call (one H100/H200): the last three commits of session 24
# (12915dc, edeaf1f, 2a5bf28: review fixes and the PartChecks clean-up of
# host/queue/producer.rs) never ran on a GPU. Every suite (the gpu suite has the
# never-run large_batches_beside_drops), the hostile suite twice, streams, residency,
# the soak (60 s), and the host path's figures at HEAD.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
lscpu | grep -E "Model name|^CPU\(s\)|L3" | tee -a $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored
for i in 1 2; do step 60 hostile-$i "$(bin $T/hostile_gpu)" --include-ignored; done
step 60 streams "$(bin $T/streams_gpu)" --include-ignored --test-threads 1
step 60 residency "$(bin $T/residency_gpu)" --include-ignored --test-threads 1
SOAK_SECS=60 step 100 soak "$(bin $T/soak)" --include-ignored --exact soak --nocapture
tail -5 $L/soak.log
step 60 latency "$(bin .gpu/benches/latency)" --bench --noplot
grep -E "^persistent \((relay|copy)\): submit" $L/latency.log
step 120 streaming "$(bin .gpu/benches/streaming)" --bench --noplot
grep -E "^persistent|^axpy" $L/streaming.log
exit 0

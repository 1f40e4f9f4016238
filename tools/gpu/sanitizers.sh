#!/usr/bin/env bash
# compute-sanitizer over the GPU suite: memcheck and synccheck on `gpu`, `fused_ops_gpu` and
# `streams_gpu` (all but `a_stream_follows_a_tickets_tasks` and
# `one_task_launches_match_submit`, whose kernels must run beside the resident kernel:
# under a sanitizer they never start, and the run hangs), not the
# fault tests (their faults are errors by design). Each takes ~35 s on the gpu suite
# (H100). racecheck is far slower: tools/gpu/racecheck.sh runs it in parts that fit
# one device call. Usage: sanitizers.sh [tool...] (default: memcheck synccheck).
cd "$(dirname "$0")/../.." && L=/tmp/logs-sanitizers && source tools/gpu/common.sh
export RESIDENT_TIME_SCALE=20 RESIDENT_BUFFER_ARENA_MB=3072
tools=("$@"); [ ${#tools[@]} -eq 0 ] && tools=(memcheck synccheck)
for tool in "${tools[@]}"; do
  for b in gpu fused_ops_gpu; do
    step 580 "$tool-$b" compute-sanitizer --tool "$tool" --error-exitcode 9 $T/$b-* --include-ignored --test-threads=1
  done
  step 300 "$tool-streams_gpu" compute-sanitizer --tool "$tool" --error-exitcode 9 $T/streams_gpu-* --include-ignored --test-threads=1 --skip a_stream_follows_a_tickets_tasks --skip one_task_launches_match_submit
done

#!/usr/bin/env bash
# racecheck over the GPU suite in parts that fit one device call (racecheck is far
# slower than memcheck and synccheck). Usage: racecheck.sh gpu [--skip NAME ...] |
# racecheck.sh rest [LIMIT LIMIT] (streams_gpu, fused_ops_gpu). Logs in /tmp/logs-racecheck.
cd "$(dirname "$0")/../.." && L=/tmp/logs-racecheck && source tools/gpu/common.sh
export RESIDENT_TIME_SCALE=20 RESIDENT_BUFFER_ARENA_MB=3072
RC=(compute-sanitizer --tool racecheck --error-exitcode 9)
A=(--include-ignored --test-threads=1)
case "$1" in
  gpu) shift; step "${LIMIT:-560}" "racecheck-gpu${1:+-part}" "${RC[@]}" $T/gpu-* "${A[@]}" "$@" ;;
  rest)
    step "${2:-200}" racecheck-streams_gpu "${RC[@]}" $T/streams_gpu-* "${A[@]}" --skip a_stream_follows_a_tickets_tasks --skip one_task_launches_match_submit
    step "${3:-300}" racecheck-fused_ops_gpu "${RC[@]}" $T/fused_ops_gpu-* "${A[@]}" ;;
esac

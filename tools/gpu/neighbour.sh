#!/usr/bin/env bash
# Issue 22: what a runtime in another process costs a neighbour's GEMM and add, under
# each residency policy, idle and busy; the neighbour alone before and after.
#   there: bash tools/gpu/neighbour.sh   (carry [".gpu"]; needs PyTorch)
cd "$(dirname "$0")/../.."
H=$(ls .gpu/examples/hold_gpu* 2>/dev/null | grep -v '\.d$' | head -1)
[ -x "$H" ] || { echo "no hold_gpu example binary in .gpu/examples"; exit 1; }
python3 tools/gpu/neighbour.py 3 "alone"
run() { # policy busy label
  $H "$1" 9 "$2" > /tmp/hold.log 2>&1 & local pid=$!
  sleep 2
  python3 tools/gpu/neighbour.py 3 "$3"
  wait $pid; tail -1 /tmp/hold.log
}
run always 0 "idle runtime, always"
run idle-10 0 "idle runtime, idle-exit 10 ms"
run idle-1 0 "idle runtime, idle-exit 1 ms"
run drained 0 "idle runtime, when drained"
run always 25 "busy 25%, always"
run idle-10 25 "busy 25%, idle-exit 10 ms"
run always 50 "busy 50%, always"
run idle-10 50 "busy 50%, idle-exit 10 ms"
python3 tools/gpu/neighbour.py 3 "alone again"

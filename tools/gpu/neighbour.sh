#!/usr/bin/env bash
# What a runtime in another process costs a neighbour's GEMM and add, under
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
run auto 0 "idle runtime, default (10 ms)"
run drained 0 "idle runtime, when drained"
run always 25 "busy 25%, always"
run auto 25 "busy 25%, default (10 ms)"
run drained 25 "busy 25%, when drained"
run always 50 "busy 50%, always"
run drained 50 "busy 50%, when drained"
python3 tools/gpu/neighbour.py 3 "alone again"

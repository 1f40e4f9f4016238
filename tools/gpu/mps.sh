#!/usr/bin/env bash
# The neighbour measurement (tools/gpu/neighbour.sh) under MPS: an
# MPS control daemon for the run, the neighbour and hold_gpu as its clients, then the
# daemon is stopped again.
#   there: bash tools/gpu/mps.sh   (carry [".gpu"]; needs PyTorch)
cd "$(dirname "$0")/../.."
H=$(ls .gpu/examples/hold_gpu* 2>/dev/null | grep -v '\.d$' | head -1)
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
python3 tools/gpu/neighbour.py 3 "no MPS, alone"
nvidia-cuda-mps-control -d || { echo "no MPS daemon"; exit 1; }
sleep 1
run() { # policy busy label
  $H "$1" 9 "$2" > /tmp/hold.log 2>&1 & local pid=$!
  sleep 2
  python3 tools/gpu/neighbour.py 3 "$3"
  wait $pid; tail -2 /tmp/hold.log
}
python3 tools/gpu/neighbour.py 3 "MPS, alone"
run always 0 "MPS, idle runtime, always"
run auto 0 "MPS, idle runtime, default"
run always 50 "MPS, busy 50%, always"
run drained 50 "MPS, busy 50%, when drained"
python3 tools/gpu/neighbour.py 3 "MPS, alone again"
echo quit | nvidia-cuda-mps-control
sleep 1
cat $CUDA_MPS_LOG_DIRECTORY/control.log 2>/dev/null | tail -5
python3 tools/gpu/neighbour.py 3 "no MPS again, alone"

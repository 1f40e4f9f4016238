#!/usr/bin/env bash
# Compiles a .cu for sm_90 (host object and cubin, nothing run) on a machine with no
# CUDA toolkit, with the nvcc of PyPI's nvidia-cuda-nvcc 13.0 (what .ci/run installs for
# ptxas): `tools/nvcc-check.sh benches/floor/read_probe.cu` prints ptxas's registers and
# any error. That package pulls a newer cicc (nvidia-nvvm 13.5), whose PTX 9.5 its ptxas
# refuses, so this runs nvcc's own steps (--dryrun) with the PTX's version set to 9.0.
# Code that needs PTX 9.1+ fails here and not on the GPU machine's toolkit (so does
# cicc 13.5's ld.volatile.local, in latency_floor.cu).
set -e
N=$(python3 -c "import nvidia, os; print([os.path.join(p, 'cu13', 'bin') for p in nvidia.__path__ if os.path.isdir(os.path.join(p, 'cu13', 'bin'))][0])")
export PATH=$N:$PATH
src=$(realpath "$1"); d=$(mktemp -d); trap 'rm -rf "$d"' EXIT; cd "$d"
nvcc -O3 -arch=sm_90 -std=c++17 -c "$src" -o out.o --keep --dryrun 2>&1 | sed 's/^#\$ //' > cmds.sh
base=$(basename "$src" .cu)
sed -i 's/^\([A-Z_]*\)=\(.*\)$/export \1=\2/' cmds.sh
sed -i "/^export INCLUDES/s#.*#INCLUDES=\"-I$N/../include\"#; /SYSTEM_INCLUDES=/d; /LIBRARIES=/d" cmds.sh
sed -i 's/\$SYSTEM_INCLUDES//g' cmds.sh
sed -i "s#^ptxas #sed -i 's/^\\\\.version 9\\\\.5/.version 9.0/' $base.ptx \&\& ptxas -v #" cmds.sh
bash -e cmds.sh 2>&1 | grep -E "error|warning|Used|spill" | grep -v "0 bytes spill" || true
test -s out.o && echo "built: $(basename "$src") for sm_90"

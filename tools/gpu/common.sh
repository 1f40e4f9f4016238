# Sourced by the scripts here, which run on the GPU machine from the repository root
# with the binaries staged in .gpu/ by tools/gpu/pack.sh (carry [".gpu"]).
# `step LIMIT NAME CMD...` runs CMD under `timeout LIMIT`, logs to $L/NAME.log, prints
# the lines that matter, and tars $L into $OUT after every step (so a run cut short
# still brings back what it did). Set L before sourcing.
L=${L:-/tmp/logs}; mkdir -p "$L"
T=.gpu/tests
step() {
  local lim=$1 name=$2; shift 2
  echo "== $name"
  local t0; t0=$(date +%s.%N)
  timeout "$lim" "$@" > "$L/$name.log" 2>&1
  local rc=$?
  echo "rc=$rc secs=$(python3 -c "import time; print(round(time.time() - $t0, 1))")" | tee -a "$L/$name.log"
  grep -E "^test result|FAILED|panicked|ERROR SUMMARY|all results|MISMATCH" "$L/$name.log" | head -20
  [ -n "${OUT:-}" ] && tar czf "$OUT/$(basename "$L").tgz" -C "$(dirname "$L")" "$(basename "$L")"
  return 0
}

# The staged binary of a test or bench: `bin .gpu/tests/gpu` -> .gpu/tests/gpu-<hash>.
bin() { for f in "$1" "$1"-*; do [ -x "$f" ] && [ "${f%.d}" = "$f" ] && { echo "$f"; return; }; done; echo "$1"; }

# The multi-device test binary: several binaries are called multi_gpu-* (the
# multi-gpu example's unit tests too); the one with the scenarios.
multi_bin() { for f in $T/multi_gpu-*; do "$f" --list 2>/dev/null | grep -q links_exactly_once && { echo "$f"; return; }; done; }

# libnccl for resident::nccl: PyTorch's, through its Python package (cudarc opens
# libnccl.so, which the package ships only as libnccl.so.2).
nccl_env() {
  local dir; dir=$(python3 -c "import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], 'lib'))" 2>/dev/null)
  mkdir -p /tmp/ncclib && ln -sf "$dir/libnccl.so.2" /tmp/ncclib/libnccl.so
  export LD_LIBRARY_PATH=/tmp/ncclib:$dir:${LD_LIBRARY_PATH:-}
}

# libcublas for the partition bench's GEMM (cudarc opens libcublas.so.13): the CUDA
# toolkit's, else PyTorch's Python package's.
cublas_env() {
  local dir; dir=$(python3 -c "import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], 'lib'))" 2>/dev/null)
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${dir:+$dir:}${LD_LIBRARY_PATH:-}
}

# The one-task round trip of the build staged as .gpu/baseline/latency-old and of this
# one, alternated, `$1` rounds (default 2): latency-old-N / latency-new-N logs.
latency_ab() {
  local i
  for i in $(seq 1 "${1:-2}"); do
    step 45 latency-old-$i .gpu/baseline/latency-old --bench --noplot
    grep -E "relay\): submit \+ wait|first task after" "$L/latency-old-$i.log" | head -2
    step 45 latency-new-$i "$(bin .gpu/benches/latency)" --bench --noplot
    grep -E "relay\): submit \+ wait|first task after" "$L/latency-new-$i.log" | head -2
  done
}

# A runtime in another process (examples/hold_gpu, 9 s, POLICY, BUSY percent) beside
# tools/gpu/neighbour.py, which prints what a GEMM and an add keep: POLICY BUSY LABEL.
beside_hold() {
  local h; h=$(ls .gpu/examples/hold_gpu* | grep -v '\.d$' | head -1)
  "$h" "$1" 9 "$2" > /tmp/hold.log 2>&1 & local pid=$!
  sleep 2
  python3 tools/gpu/neighbour.py 3 "$3"
  wait $pid; tail -1 /tmp/hold.log
}

# `stream_run NAME BIN ROWS`: one streaming-bench run of BIN on the criterion rows
# matching ROWS, logged as NAME, printing criterion's throughputs and the bench's
# own table (medians of 7 passes), M tasks/s.
stream_run() {
  local name=$1 b=$2 rows=$3
  step 90 "$name" "$b" --bench --noplot "$rows"
  echo "$name crit: $(grep -A2 -E '^stream_noop/persistent' "$L/$name.log" | grep thrpt | grep -v '%' | awk '{printf "%s ", $4}')"
  echo "$name table: $(grep -E '^persistent' "$L/$name.log" | awk '{printf "%s ", $(NF-2)}')"
}


# Sourced by the scripts here, which run on the GPU machine from the repository root
# with the binaries staged by ../shared/tools/gpu-pack in .gpu/ (carry [".gpu"]).
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

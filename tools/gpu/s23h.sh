#!/usr/bin/env bash
# Session 23: the hostile suite with diagnostics (not committed: what settle and
# shutdown saw when the workers were gone before the tickets settled), four times; then
# the streaming comparison of s23d on the final code.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23h} && source tools/gpu/common.sh
for i in 1 2 3 4; do
  step 60 hostile-diag-$i .gpu/variants/hostile-diag --include-ignored
  grep -E "DIAG|close returned|ticket then" $L/hostile-diag-$i.log | cut -c1-400 | head -8
done
bash tools/gpu/s23d.sh logs-s23h-streaming
cp -r /tmp/logs-s23h-streaming $L/ 2>/dev/null
[ -n "${OUT:-}" ] && tar czf "$OUT/$(basename "$L").tgz" -C "$(dirname "$L")" "$(basename "$L")"
exit 0

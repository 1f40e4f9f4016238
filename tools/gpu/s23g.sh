#!/usr/bin/env bash
# Session 23: which change of this build makes two hostile scenarios fail under other
# processes' contention (s23c, s23e, s23f): the suite with streaming stores off, with
# the large-batch check after the reservation off, with the old header check, and the
# build before (7ccd492), in turn, three rounds.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s23g} && source tools/gpu/common.sh
for i in 1 2 3; do
  for v in nont nodefer nohdr; do
    step 60 hostile-$v-$i .gpu/variants/hostile-$v --include-ignored
    grep -A1 "panicked at tests/common/hostile" $L/hostile-$v-$i.log | head -4
  done
  step 60 hostile-old-$i .gpu/baseline/hostile_gpu --include-ignored
done
exit 0

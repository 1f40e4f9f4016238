#!/usr/bin/env bash
# Session 25, calls c and d (one H100): the copy path's publication, variants by
# experiment switches in a build not committed (RESIDENT_MEMOPS_TAIL: `tail` by a
# stream write, slot by a copy; RESIDENT_PAGEABLE: the slot copied from pageable
# memory). Without a switch that build wrote records and `tail` by one batch of stream
# writes. The landed code (tail by a stream write) is what RESIDENT_MEMOPS_TAIL ran.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s25c} && source tools/gpu/common.sh
for i in 1 2; do
  step 90 latency-$i "$(bin .gpu/benches/latency)" --bench --noplot
  RESIDENT_MEMOPS_TAIL=1 step 90 latency-tail-$i "$(bin .gpu/benches/latency)" --bench --noplot
  RESIDENT_PAGEABLE=1 RESIDENT_MEMOPS_TAIL=1 step 90 latency-pageable-$i "$(bin .gpu/benches/latency)" --bench --noplot
done

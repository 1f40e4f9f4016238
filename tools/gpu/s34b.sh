#!/usr/bin/env bash
# Session 34 (prepared, not run: no device time): READ_AHEAD (16) by cp.async
# (tools/gpu/s34b-cpasync-read-ahead.patch: session 33's s33f read-ahead on HEAD, its
# `ld` replaced by cp.async into a 64-byte slot a warp in static shared memory, waited
# for after the task's completion). Session 33's `ld` read-ahead gained nothing because
# ptxas put its load on the scoreboard the task's own argument loads wait on (SASS in
# docs/host-path.md, session 34); LDGSTS is tracked apart (LDGDEPBAR / DEPBAR), and in
# this build nothing waits for it before the completion. What only the GPU can say:
# whether the completion's MEMBAR.ALL.GPU waits for an outstanding LDGSTS (for axpy the
# body hides the read either way), and whether LDGSTS reads mapped host memory at all.
# Stage (here): a worktree of HEAD with the patch applied, then in it
#   tools/gpu/quickpack.sh test:gpu bench:dispatch
# and copy its .gpu/tests/gpu-* and .gpu/benches/dispatch-* into this checkout's .gpu/ra/.
# Runs: the patched GPU suite (its policy test runs READ_AHEAD with claims 1 and 8), the
# 20k timelines at the default flags (12) and with READ_AHEAD (28), the pipelined rows
# alternated ABBA. Compare with s33f's (same rows, `ld` read-ahead).
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s34b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu-ra "$(bin .gpu/ra/gpu)" --include-ignored --test-threads=1
flags_ab "$(bin .gpu/ra/dispatch)" 12 28
exit 0

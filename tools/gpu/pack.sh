#!/usr/bin/env bash
# Here (the machine with Rust), before a GPU session: ../shared/tools/gpu-pack, then
# strip the binaries and drop those that test the CPU backend only, so that .gpu stays
# well under the 64 MiB a device call carries (everything stripped: about 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/../.."
../shared/tools/gpu-pack
strip .gpu/*/* 2>/dev/null || true
cd .gpu/tests
rm -f compile_fail-* cpu-* *_cpu-* loom_protocol-* miri_cpu-* prop_checks-* prop_model-* reliability_cpu-* \
    resident_build-* resident_shared-* resident_device-* custom_task_device-* fused_ops_device-*
cd ../..
du -sh .gpu
ls .gpu/tests

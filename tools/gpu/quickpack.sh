#!/usr/bin/env bash
# Here, between GPU calls: build only the named test and bench binaries and stage them
# (stripped) in .gpu/ as tools/gpu/pack.sh does, keeping what is staged already.
#   tools/gpu/quickpack.sh test:gpu test:hostile_gpu bench:latency bench:streaming
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .gpu/tests .gpu/benches
pick() { python3 -c '
import json, sys
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"): print(m["executable"])'; }
for t in "$@"; do
  kind=${t%%:*} name=${t#*:}
  if [ "$kind" = test ]; then
    rm -f .gpu/tests/"$name"-*
    cargo test --release --no-run --test "$name" --message-format=json 2>/dev/null | pick | while read -r f; do cp "$f" .gpu/tests/; done
  else
    rm -f .gpu/benches/"$name"-*
    cargo bench --no-run --bench "$name" --message-format=json 2>/dev/null | pick | while read -r f; do cp "$f" .gpu/benches/; done
  fi
done
strip .gpu/*/* 2>/dev/null || true
du -sh .gpu; ls .gpu/tests .gpu/benches

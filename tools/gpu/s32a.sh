#!/usr/bin/env bash
# Session 32, first call: the GPU suites on HEAD (2055f6c's protocol had not run on a
# GPU); the host's vCPU pairs that share a physical core (a multiply-port-bound probe on
# each pair at once); then four producers x 256 with the producers pinned to CPUs of
# distinct cores, to CPUs that pair up on cores, and unpinned, against one producer.
# (As run in s32a the pair probe read the wrong field and found no pairs; fixed after: the
# pinned rows ran on CPUs 1-4, which lscpu reports as four cores, one thread each.)
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s32a} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
step 90 hostile "$(bin $T/hostile_gpu)" --include-ignored --test-threads=1
grep -c "^test result: ok. 1 passed" $L/hostile.log
lscpu > $L/lscpu.txt; lscpu -p=CPU,CORE,SOCKET,NODE >> $L/lscpu.txt
cat /sys/devices/system/cpu/cpu*/topology/thread_siblings_list | tr '\n' ' ' >> $L/lscpu.txt
cc -O2 -pthread tools/gpu/probe/freq.c -o /tmp/freq
n=$(nproc)
for i in $(seq 0 $((n - 1))); do for j in $(seq $((i + 1)) $((n - 1))); do
  a=$( (taskset -c $i /tmp/freq 1 tp & taskset -c $j /tmp/freq 1 tp; wait) | awk '{print $NF}' | sort -n | head -1)
  echo "$i $j $a"
done; done > $L/pairs.txt
# A pair is siblings when its slower thread ran below 0.75 of the best pair's.
best=$(sort -k3 -n $L/pairs.txt | tail -1 | awk '{print $3}')
awk -v b=$best '$3 < 0.75 * b' $L/pairs.txt | tee $L/siblings.txt
# Four CPUs no two of which are siblings, and two sibling pairs.
distinct=$(python3 - $L/siblings.txt $n <<'PY'
import sys
sib = {tuple(map(int, l.split()[:2])) for l in open(sys.argv[1]) if l.strip()}
n = int(sys.argv[2]); pick = []
for c in range(1, n):
    if all((min(c, p), max(c, p)) not in sib for p in pick): pick.append(c)
    if len(pick) == 4: break
print(",".join(map(str, pick)))
PY
)
paired=$(head -2 $L/siblings.txt | awk '{printf "%s%s,%s", (NR > 1 ? "," : ""), $1, $2}')
echo "distinct: $distinct; paired: $paired" | tee -a $L/lscpu.txt
S=$(bin .gpu/benches/streaming); export STREAMING_ROWS=1x256,4x256
for r in 1 2; do
  stream_run free-$r $S 'persistent_'
  [ -n "$distinct" ] && STREAMING_PIN=$distinct stream_run distinct-$r $S 'persistent_'
  [ -n "$paired" ] && STREAMING_PIN=$paired stream_run paired-$r $S 'persistent_'
done 2>&1
exit 0

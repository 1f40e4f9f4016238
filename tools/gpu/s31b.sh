#!/usr/bin/env bash
# Session 31: hot lines padded (the producer lock, the publisher, the tracker's scan
# lock, registration head, `completed`, `scanning`, `last_health`) against HEAD's
# layout, same rows, ABBA x 2; then the GPU suite on the padded build.
cd "$(dirname "$0")/../.." && L=/tmp/${1:-logs-s31b} && source tools/gpu/common.sh
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee $L/device.txt
new=$(bin .gpu/benches/streaming) old=.gpu/baseline/streaming-old
i=0
for v in old new new old old new new old; do
  i=$((i+1))
  if [ $v = old ]; then b=$old; else b=$new; fi
  STREAMING_ROWS=1x256,4x256 stream_run $v-$i $b 'persistent_'
done
step 150 gpu "$(bin $T/gpu)" --include-ignored --test-threads=1
exit 0

// Which stream memory operations the driver takes: single writes, batches
// of 32- and 64-bit writes, with and without the no-barrier flag, on cuMemAlloc memory.
// nvcc -o /tmp/memops tools/gpu/probe/memops.c -lcuda && /tmp/memops
#include <cuda.h>
#include <stdio.h>
#include <string.h>
static const char *name(CUresult r) { const char *s; cuGetErrorName(r, &s); return s; }
static CUstreamBatchMemOpParams w(int bits, CUdeviceptr a, unsigned long long v, unsigned flags) {
  CUstreamBatchMemOpParams p; memset(&p, 0, sizeof p);
  p.writeValue.operation = bits == 64 ? CU_STREAM_MEM_OP_WRITE_VALUE_64 : CU_STREAM_MEM_OP_WRITE_VALUE_32;
  p.writeValue.address = a;
  if (bits == 64) p.writeValue.value64 = v; else p.writeValue.value = (cuuint32_t)v;
  p.writeValue.flags = flags;
  return p;
}
int main() {
  CUdevice d; CUcontext c; CUstream s; CUdeviceptr m; int a1, a2, a3, a4;
  cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
  cuStreamCreate(&s, CU_STREAM_NON_BLOCKING); cuMemAlloc(&m, 1 << 20);
  cuDeviceGetAttribute(&a1, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, d);
  cuDeviceGetAttribute(&a2, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR, d);
  cuDeviceGetAttribute(&a3, CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1, d);
  cuDeviceGetAttribute(&a4, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1, d);
  printf("attrs: 64bit=%d nor=%d v1=%d v1_64=%d sizeof(params)=%zu\n", a1, a2, a3, a4, sizeof(CUstreamBatchMemOpParams));
  printf("write32: %s\n", name(cuStreamWriteValue32(s, m, 1, 0)));
  printf("write64: %s\n", name(cuStreamWriteValue64(s, m + 8, 2, 0)));
  printf("write64 nobarrier: %s\n", name(cuStreamWriteValue64(s, m + 8, 2, CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)));
  CUstreamBatchMemOpParams p[256];
  p[0] = w(32, m, 3, 0); printf("batch 1 x w32: %s\n", name(cuStreamBatchMemOp(s, 1, p, 0)));
  p[0] = w(64, m + 8, 3, 0); printf("batch 1 x w64: %s\n", name(cuStreamBatchMemOp(s, 1, p, 0)));
  p[0] = w(64, m + 8, 3, 1); printf("batch 1 x w64 nobarrier: %s\n", name(cuStreamBatchMemOp(s, 1, p, 0)));
  p[0] = w(32, m, 3, 1); printf("batch 1 x w32 nobarrier: %s\n", name(cuStreamBatchMemOp(s, 1, p, 0)));
  p[0] = w(32, m, 3, 0); p[1] = w(32, m + 4, 4, 0); printf("batch 2 x w32: %s\n", name(cuStreamBatchMemOp(s, 2, p, 0)));
  p[0] = w(64, m + 8, 3, 1); p[1] = w(32, m, 4, 0); printf("batch w64 nb + w32: %s\n", name(cuStreamBatchMemOp(s, 2, p, 0)));
  for (int n = 2; n <= 255; n *= 2) {
    for (int i = 0; i < n; i++) p[i] = w(32, m + 4 * i, i, 0);
    printf("batch %d x w32: %s\n", n, name(cuStreamBatchMemOp(s, n, p, 0)));
  }
  for (int i = 0; i < 9; i++) p[i] = w(64, m + 64 + 8 * i, i, i < 8);
  printf("batch 9 x w64 (8 nb): %s\n", name(cuStreamBatchMemOp(s, 9, p, 0)));
  for (int i = 0; i < 9; i++) p[i] = w(32, m + 64 + 4 * i, i, i < 8);
  printf("batch 9 x w32 (8 nb): %s\n", name(cuStreamBatchMemOp(s, 9, p, 0)));
  p[0] = w(32, m, 5, 0); p[1].memoryBarrier.operation = CU_STREAM_MEM_OP_BARRIER; p[1].memoryBarrier.flags = CU_STREAM_MEMORY_BARRIER_TYPE_SYS;
  printf("batch w32 + barrier: %s\n", name(cuStreamBatchMemOp(s, 2, p, 0)));
  printf("sync: %s\n", name(cuStreamSynchronize(s)));
  // Timing: 10000 x (write32) and 10000 x (1 KB copy + write32) and batch 9 w32 from the host thread.
  return 0;
}

// What other warps' memory orderings cost a warp's own loads on one SM: warp 0 of each
// block times chains of dependent loads (clock64 per load, median over the blocks)
// while the block's other warps run one of these neighbours:
//   none      they exit at once
//   relaxed   ld.relaxed.gpu of one line, in a loop (with nanosleep 100)
//   acquire   ld.acquire.gpu of one line, in a loop (sm_90: LD.STRONG + CCTL.IVALL)
//   acq_rel   atom.add.acq_rel.gpu on one address, in a loop
// The chains: a local array (lane-private: where spilled registers live), a global
// buffer read through L1 (ld.ca: the warp's own data, as a task record or a buffer
// table entry), the same through L2 (ld.cg), and shared memory.
//   nvcc -arch=sm_90 -O2 -o /tmp/acq tools/gpu/probe/acquire_cost.cu && /tmp/acq
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define STEPS 256
#define SPAN 64

__device__ unsigned hot[64];

__device__ __forceinline__ unsigned ld_ca(const unsigned *p) { unsigned v; asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
__device__ __forceinline__ unsigned ld_cg(const unsigned *p) { unsigned v; asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }

// The clock, read once `dep` has arrived (a load's result is waited for only where it
// is used: a branch on it, before the clock).
__device__ __forceinline__ unsigned long long clock_after(unsigned dep) {
  if (dep == 0xffffffffu) asm volatile("trap;");
  return clock64();
}

__global__ void probe(int neighbour, unsigned *buf, unsigned long long *out) {
  unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp != 0) {
    if (neighbour == 0) return;
    unsigned *p = &hot[(blockIdx.x % 2) * 32];
    for (int i = 0; i < 4000; i++) {
      unsigned v;
      if (neighbour == 1) asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p));
      else if (neighbour == 2) asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p));
      else asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(v) : "l"(p));
      if (v == 0xdeadbeef) buf[0] = v;
      __nanosleep(100);
    }
    return;
  }
  if (lane != 0) return;
  // Let the neighbours start.
  unsigned long long t0 = clock64();
  while (clock64() - t0 < 20000) {}
  unsigned *mine = buf + blockIdx.x * SPAN;
  __shared__ unsigned sm[SPAN];
  // Local memory, filled from the buffer (not known when compiled) and read through a
  // generic pointer by asm (never promoted to registers).
  unsigned loc[SPAN];
  for (int i = 0; i < SPAN; i++) { loc[i] = ld_cg(mine + i); sm[i] = (i * 7 + 1) % SPAN; }
  unsigned long long r[4];
  unsigned x = 0;
  // Warm every chain once, then time it.
  for (int kind = 0; kind < 4; kind++) {
    for (int pass = 0; pass < 2; pass++) {
      x = 0;
      unsigned long long a = clock64();
      for (int i = 0; i < STEPS; i++) {
        if (kind == 0) asm volatile("ld.u32 %0, [%1];" : "=r"(x) : "l"(loc + x) : "memory");
        else if (kind == 1) x = ld_ca(mine + x);
        else if (kind == 2) x = ld_cg(mine + x);
        else x = ((volatile unsigned *)sm)[x];
      }
      r[kind] = (clock_after(x) - a) / STEPS;
    }
  }
  if (x == 0xdeadbeef) buf[1] = x;
  for (int k = 0; k < 4; k++) out[blockIdx.x * 4 + k] = r[k];
}

int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  int blocks = sms * 2;
  std::vector<unsigned> host(blocks * SPAN);
  for (int b = 0; b < blocks; b++) for (int i = 0; i < SPAN; i++) host[b * SPAN + i] = (i * 7 + 1) % SPAN;
  unsigned *buf; unsigned long long *out;
  cudaMalloc(&buf, host.size() * 4); cudaMalloc(&out, blocks * 4 * 8);
  cudaMemcpy(buf, host.data(), host.size() * 4, cudaMemcpyHostToDevice);
  const char *names[] = {"none", "relaxed", "acquire", "acq_rel"};
  printf("cycles per dependent load (median over %d blocks of 256 threads), by what the block's 7 other warps do\n", blocks);
  printf("%-10s %8s %8s %8s %8s\n", "neighbours", "local", "ld.ca", "ld.cg", "shared");
  for (int n = 0; n < 4; n++) {
    probe<<<blocks, 256>>>(n, buf, out);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) { printf("%s\n", cudaGetErrorString(e)); return 1; }
    std::vector<unsigned long long> r(blocks * 4);
    cudaMemcpy(r.data(), out, r.size() * 8, cudaMemcpyDeviceToHost);
    printf("%-10s", names[n]);
    for (int k = 0; k < 4; k++) {
      std::vector<unsigned long long> c;
      for (int b = 0; b < blocks; b++) c.push_back(r[b * 4 + k]);
      std::sort(c.begin(), c.end());
      printf(" %8llu", c[c.size() / 2]);
    }
    printf("\n");
  }
  return 0;
}

// What the C++ floor programs (host_floor.cu, list_floor.cu, latency_floor.cu,
// read_probe.cu) share: the error check, the memory operations they write in PTX, the
// task body they all run (the runtime's axpy: 8-deep float4 loads a lane), and the
// median. Each program is built alone by nvcc (see its header), this file beside it.
#pragma once
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1); } } while (0)

__device__ __forceinline__ uint32_t ld_acq_sys(const uint32_t* p) {
  uint32_t v; asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ uint32_t atom_add_acq_rel_gpu(uint32_t* p, uint32_t v) {
  uint32_t r; asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "r"(v) : "memory"); return r; }
__device__ __forceinline__ void st_rlx_sys(uint32_t* p, uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }
__device__ __forceinline__ void st_rel_gpu(uint32_t* p, uint32_t v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory"); }

// y = a x + y over n floats (n a multiple of 1024), by one warp: each lane has 8 float4
// loads of x and 8 of y in flight at once, as the runtime's axpy task.
__device__ __forceinline__ void axpy(float a, const float* x, float* y, uint32_t n) {
  const int lane = threadIdx.x & 31;
  const float4* x4 = (const float4*)x; float4* y4 = (float4*)y;
  uint32_t n4 = n / 4;
  for (uint32_t base = 0; base + 8 * 32 <= n4; base += 8 * 32) {
    float4 xv[8], yv[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) { xv[u] = x4[base + u * 32 + lane]; yv[u] = y4[base + u * 32 + lane]; }
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      float4 r = yv[u];
      r.x += a * xv[u].x; r.y += a * xv[u].y; r.z += a * xv[u].z; r.w += a * xv[u].w;
      y4[base + u * 32 + lane] = r;
    }
  }
}

static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

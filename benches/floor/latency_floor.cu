// The hardware floor of a host -> GPU -> host round trip, and what each extra hop of
// the runtime's submission path costs on top of it. A diagnostic in CUDA C++ (built
// with nvcc on the GPU machine), not part of the runtime: it answers "how fast could
// any design be here?" for benches/latency.rs.
//
//   nvcc -O3 -arch=sm_90 -o latency_floor benches/floor/latency_floor.cu && ./latency_floor
//
// Every variant: the host writes into mapped pinned memory, the GPU answers into mapped
// pinned memory, the host spins until it sees the answer. 20,000 round trips after 2,000
// warm-up, percentiles in microseconds.
//   echo           one warp polls a flag (ld.relaxed.sys), echoes it (st.relaxed.sys)
//   echo+fence     the same, with fence.sc.sys before the echo (what a completion record costs)
//   ll-64B         the flag is a 64-byte task in 8-byte words, each half stamped (NCCL's LL
//                  protocol): one parallel read brings task and flag; echo after checking
//   ll-64B-stage   as ll-64B, but the warp first reads a 64-byte staging slot (a second
//                  dependent PCIe read, as the runtime's relay did)
//   hop-N-S        relay warp sees the flag, st.release.gpu a device flag; N worker warps
//                  poll it (ld.acquire.gpu, nanosleep <= S ns), one claims it with an atomic,
//                  fence.sc.sys, echoes
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda_runtime.h>
#include "floor.cuh"

__device__ __forceinline__ uint64_t ld_sys(const volatile uint64_t* p) {
  uint64_t v; asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
__device__ __forceinline__ void st_sys(volatile uint64_t* p, uint64_t v) {
  asm volatile("st.relaxed.sys.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory"); }
__device__ __forceinline__ uint32_t ld_acq_gpu(const uint32_t* p) {
  uint32_t v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

struct Box { uint64_t flag; uint64_t pad[15]; uint64_t echo; uint64_t pad2[15]; uint64_t ll[16]; uint64_t stage[8]; };

// mode 0: echo, 1: echo+fence, 2: ll, 3: ll + staging read
__global__ void poller(Box* b, int mode, int n) {
  int lane = threadIdx.x;
  for (uint64_t want = 1; want <= (uint64_t)n; ++want) {
    if (mode <= 1) {
      if (lane == 0) { while (ld_sys(&b->flag) != want) {} }
      __syncwarp();
    } else {
      // Lanes 0..15 each read one 8-byte word: 4 payload bytes + 4 stamp bytes.
      while (true) {
        uint64_t w = lane < 16 ? ld_sys(&b->ll[lane]) : (want << 32);
        bool ok = (w >> 32) == want;
        if (__all_sync(0xffffffff, ok)) break;
      }
      if (mode == 3) { volatile uint64_t s = lane < 8 ? ld_sys(&b->stage[lane]) : 0; (void)s; }
    }
    if (lane == 0) {
      if (mode == 1) asm volatile("fence.sc.sys;" ::: "memory");
      st_sys(&b->echo, want);
    }
    __syncwarp();
  }
}

struct Hop { uint32_t tail; uint32_t pad[31]; uint32_t head; uint32_t pad2[31]; uint32_t stop; };

__global__ void hop_relay(Box* b, Hop* h, int n) {
  if (threadIdx.x != 0) return;
  for (uint64_t want = 1; want <= (uint64_t)n; ++want) {
    while (ld_sys(&b->flag) != want) {}
    st_rel_gpu(&h->tail, (uint32_t)want);
  }
}

__global__ void hop_workers(Box* b, Hop* h, int max_sleep) {
  int lane = threadIdx.x & 31;
  while (true) {
    uint32_t mine = 0;
    if (lane == 0) mine = atomicAdd(&h->head, 1);
    mine = __shfl_sync(0xffffffff, mine, 0);
    unsigned sleep = 32;
    while (true) {
      uint32_t t = ld_acq_gpu(&h->tail);
      if (t > mine) break;
      if (ld_acq_gpu(&h->stop)) return;
      __nanosleep(sleep); sleep = min(sleep * 2, (unsigned)max_sleep);
    }
    if (lane == 0) { asm volatile("fence.sc.sys;" ::: "memory"); st_sys(&b->echo, mine + 1); }
    __syncwarp();
  }
}

static void report(const char* name, std::vector<double>& s) {
  std::sort(s.begin(), s.end());
  auto p = [&](double q) { return s[(size_t)(q * (s.size() - 1))]; };
  printf("%-22s p50 %6.2f  p90 %6.2f  p99 %6.2f  p99.9 %6.2f us\n", name, p(.5), p(.9), p(.99), p(.999));
}

// Host spins are bounded: a variant that stalls says so and the program ends.
static bool spin_until(volatile uint64_t* p, uint64_t want, const char* what) {
  auto start = std::chrono::steady_clock::now();
  while (*p != want)
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) {
      printf("%s: no answer for %llu after 2 s\n", what, (unsigned long long)want); return false; }
  return true;
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  const int W = 2000, N = 20000;
  Box* b; CK(cudaHostAlloc(&b, sizeof(Box), cudaHostAllocMapped));
  Box* db; CK(cudaHostGetDevicePointer(&db, b, 0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs\n", prop.name, prop.multiProcessorCount);
  volatile Box* vb = b;
  auto now = [] { return std::chrono::steady_clock::now(); };
  const char* names[] = {"echo", "echo+fence.sc.sys", "ll-64B", "ll-64B-stage"};
  for (int mode = 0; mode < 4; ++mode) {
    memset(b, 0, sizeof(Box));
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    poller<<<1, 32, 0, s>>>(db, mode, W + N);
    CK(cudaGetLastError());
    std::vector<double> t;
    for (uint64_t i = 1; i <= (uint64_t)(W + N); ++i) {
      auto a = now();
      if (mode <= 1) vb->flag = i;
      else for (int k = 0; k < 16; ++k) vb->ll[k] = (i << 32) | (uint32_t)(k * 7 + i);
      if (!spin_until(&vb->echo, i, names[mode])) return 1;
      if (i > (uint64_t)W) t.push_back(std::chrono::duration<double, std::micro>(now() - a).count());
    }
    CK(cudaStreamSynchronize(s));
    report(names[mode], t);
    CK(cudaStreamDestroy(s));
  }
  Hop* h; CK(cudaMalloc(&h, sizeof(Hop)));
  // Load both kernels now: with lazy loading, the relay's first launch would wait for
  // the resident workers to finish (they never do).
  cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, hop_workers)); CK(cudaFuncGetAttributes(&fa, hop_relay));
  int sms = prop.multiProcessorCount;
  int configs[][3] = {{1, 1, 128}, {1, 1, 512}, {sms * 2, 8, 128}, {sms * 2, 8, 512}, {sms * 2, 8, 2048}};
  for (auto& c : configs) {
    memset(b, 0, sizeof(Box));
    CK(cudaMemset(h, 0, sizeof(Hop)));
    CK(cudaDeviceSynchronize());  // the legacy-stream memset, before the non-blocking kernels
    cudaStream_t s1, s2; CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    hop_workers<<<c[0], c[1] * 32, 0, s1>>>(db, h, c[2]);
    hop_relay<<<1, 32, 0, s2>>>(db, h, W + N);
    CK(cudaGetLastError());
    std::vector<double> t;
    for (uint64_t i = 1; i <= (uint64_t)(W + N); ++i) {
      auto a = now();
      vb->flag = i;
      if (!spin_until(&vb->echo, i, "hop")) return 1;
      if (i > (uint64_t)W) t.push_back(std::chrono::duration<double, std::micro>(now() - a).count());
    }
    CK(cudaStreamSynchronize(s2));
    uint32_t one = 1; CK(cudaMemcpy(&h->stop, &one, 4, cudaMemcpyHostToDevice));
    CK(cudaStreamSynchronize(s1));
    char name[64]; snprintf(name, sizeof name, "hop-%dw-%dns", c[0] * c[1], c[2]);
    report(name, t);
    CK(cudaStreamDestroy(s1)); CK(cudaStreamDestroy(s2));
  }
  // Baseline in the same run: launch + synchronize of an empty kernel.
  {
    cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<double> t;
    for (int i = 0; i < W + N; ++i) {
      auto a = now();
      poller<<<1, 32, 0, s>>>(db, 0, 0);
      CK(cudaStreamSynchronize(s));
      if (i >= W) t.push_back(std::chrono::duration<double, std::micro>(now() - a).count());
    }
    report("launch+sync (empty)", t);
  }
  return 0;
}

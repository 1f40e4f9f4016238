// What a HOST-FED batch of 20,000 tasks could cost at best on this machine, and which way
// of getting tasks from host threads to the workers costs what: a minimal persistent
// kernel in CUDA C++ (built with nvcc on the GPU machine), not part of the runtime. It
// answers "how far is the runtime's 313 us host-fed batch from what PCIe and the host
// allow, and which publication scheme gets there?".
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o host_floor benches/floor/host_floor.cu -lcuda -lpthread && ./host_floor
//
// The kernel is list_floor.cu's: every warp claims one slot at a time (atomicAdd on
// head), waits until the slot is published (ld.acquire.sys of a tail; a warp remembers
// the last tail it saw, so it polls only when it has caught up), reads the task, runs
// nothing (noop) or axpy on 1024 floats, and the warp that completes a segment of 1024
// stores its stamp into mapped pinned memory. The host times one batch from the moment
// it starts writing the batch's tasks until it has seen every segment's stamp.
//
// Ways to publish (each a row; median us of 51 batches after 5 warm-up, noop and axpy):
//   copy+memcpy  tasks written into pinned staging, copied into a device ring with
//                cudaMemcpyAsync per chunk, then tail by a 4-byte cudaMemcpyAsync
//                (the runtime's way today)
//   copy+wv      the same, tail by cuStreamWriteValue32 (no copy engine for the tail)
//   zc           zero copy: tasks written into a ring in mapped pinned host memory, which
//                the workers read over PCIe; tail is a word in the same memory, written
//                by the host with a release store after each chunk, and every worker
//                polls it there: no driver call, but 2,112 warps polling host memory
//                flood PCIe with reads (H100, 2026-11-25: 9 ms per batch, an 81-122 us
//                round trip)
//   zc+relay     the same, but one relay warp alone polls the host's tail and passes it
//                on to a tail in device memory, which the workers poll; they still read
//                each task from host memory (the runtime has such a relay warp already)
//   , wc         the ring in write-combined pinned memory
//   xT           T host threads: chunks dealt round robin, each thread writes its chunk,
//                waits until the chunks before it are published, then moves tail
//                (ordered commit, as lock-free producers would)
// and how each thread gets its tasks: "build" writes each task's fields in place (a
// reserve / write-in-place / commit API), "memcpy" copies them from a ready array in
// pageable memory (what `submit(&[Task])` must do).
//
// References in the same run: one memcpy of the batch's 1.28 MB from pageable into pinned
// memory (1 thread, and split over 4 threads); a one-task batch (the round trip); one
// cudaMemcpy of 1.28 MB host to device; a device copy of the axpy's bytes (its "% copy").
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <thread>
#include <atomic>
#include <algorithm>
#include <chrono>
#include <immintrin.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include "floor.cuh"

#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char* msg_; cuGetErrorString(err_, &msg_); printf("%s: %s\n", #x, msg_); exit(1); } } while (0)

constexpr int N = 20000, SLICE = 1024, SEG = 1024, CAP = 1 << 16, STAMPS = 64;

struct __align__(16) Task { const float* x; float* y; uint32_t n; uint32_t kind; uint32_t pad[10]; };
static_assert(sizeof(Task) == 64, "task is 64 bytes");
// The compact record: the same fields, 32 bytes. A ring of them holds
// records at a stride of 32; the kernel reads only the first 24 bytes either way.
struct __align__(16) Task32 { const float* x; float* y; uint32_t n; uint32_t kind; uint32_t pad[2]; };
static_assert(sizeof(Task32) == 32, "compact task is 32 bytes");

__device__ unsigned int g_head;
__device__ unsigned int g_tail;          // the copy modes' tail (device memory)
__device__ unsigned int g_counts[STAMPS];

// total: tasks over the kernel's life (then it exits); nb: tasks per batch (segments are
// cut from each batch's start, as the runtime does).
// relay != nullptr: warp 0 of block 0 is a relay: it alone polls the host's tail (in
// mapped host memory) and passes each new value on to `tail` (device memory), which the
// other warps poll.
__global__ void __launch_bounds__(256) persistent(const char* ring, uint32_t stride, uint32_t* tail, uint32_t* stamps, uint32_t total, uint32_t nb,
                                                   const uint32_t* relay) {
  const int lane = threadIdx.x & 31;
  if (relay && blockIdx.x == 0 && threadIdx.x < 32) {
    if (lane == 0) {
      uint32_t last = 0;
      while (last < total) {
        // Acquire (sys): the host's task stores before its release store of the tail;
        // release (gpu): passes them on to the workers' acquire of `tail`.
        uint32_t t = ld_acq_sys(relay);
        if (t != last) { st_rel_gpu(tail, t); last = t; } else { __nanosleep(64); }
      }
    }
    return;
  }
  const uint32_t nseg = (nb + SEG - 1) / SEG;
  uint32_t seen = 0;
  while (true) {
    uint32_t seq = 0;
    if (lane == 0) seq = atomicAdd(&g_head, 1u);
    seq = __shfl_sync(0xffffffff, seq, 0);
    if (seq >= total) return;
    unsigned sleep = 32;
    while (seen <= seq) {
      uint32_t t = 0;
      if (lane == 0) t = ld_acq_sys(tail);
      seen = __shfl_sync(0xffffffff, t, 0);
      if (seen > seq) break;
      __nanosleep(sleep); sleep = min(sleep * 2, 256u);
    }
    __syncwarp();
    const char* t = ring + (size_t)(seq & (CAP - 1)) * stride;
    uint4 a = make_uint4(0, 0, 0, 0); uint2 b = make_uint2(0, 0);
    if (lane == 0) { a = *(const uint4*)t; b = *(const uint2*)((const char*)t + 16); }
    a.x = __shfl_sync(0xffffffff, a.x, 0); a.y = __shfl_sync(0xffffffff, a.y, 0);
    a.z = __shfl_sync(0xffffffff, a.z, 0); a.w = __shfl_sync(0xffffffff, a.w, 0);
    b.x = __shfl_sync(0xffffffff, b.x, 0); b.y = __shfl_sync(0xffffffff, b.y, 0);
    const float* x = (const float*)(((unsigned long long)a.y << 32) | a.x);
    float* y = (float*)(((unsigned long long)a.w << 32) | a.z);
    if (b.y == 1) axpy(1e-3f, x, y, b.x);
    __syncwarp();
    if (lane == 0) {
      uint32_t batch = seq / nb, i = seq % nb, s = i / SEG, len = min((uint32_t)SEG, nb - s * SEG);
      uint32_t id = batch * nseg + s, slot = id % STAMPS;
      uint32_t before = atom_add_acq_rel_gpu(&g_counts[slot], 1);
      if (before + 1 == len) {
        g_counts[slot] = 0;
        asm volatile("fence.acq_rel.sys;" ::: "memory");
        st_rlx_sys(&stamps[slot], id + 1);
      }
    }
    __syncwarp();
  }
}

__global__ void flat(const float* x, float* y) {
  uint32_t w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (w < N) axpy(1e-3f, x + (size_t)w * SLICE, y + (size_t)w * SLICE, SLICE);
}

using clk = std::chrono::steady_clock;
static double us(clk::time_point a, clk::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

enum Publish { COPY_MEMCPY, COPY_WV, ZC, ZC_RELAY };
struct V { const char* name; Publish publish; bool wc; int threads; bool build; uint32_t chunk; uint32_t nb; uint32_t stride = 64; };

// Host threads that write chunks of a batch into a ring and publish them in order.
struct Pool {
  std::vector<std::thread> ts;
  std::atomic<uint64_t> go{0};       // batch generation to run
  std::atomic<int> done{0};
  std::atomic<uint32_t> published{0};
  std::atomic<bool> quit{false};
  // The batch: [first, first + nb) into ring (or staging), from `src` or built in place.
  char* ring = nullptr; uint32_t* tail = nullptr; const char* src = nullptr; uint32_t stride = 64;
  uint32_t first = 0, nb = 0, chunk = 0; bool build = false; const float* x = nullptr; float* y = nullptr; uint32_t kind = 0;
  int n = 0;
  void work(int id) {
    uint64_t seen = 0;
    while (true) {
      uint64_t g;
      while ((g = go.load(std::memory_order_acquire)) == seen) { if (quit.load(std::memory_order_relaxed)) return; }
      seen = g;
      uint32_t chunks = (nb + chunk - 1) / chunk;
      for (uint32_t c = id; c < chunks; c += n) {
        uint32_t lo = c * chunk, hi = std::min(nb, lo + chunk);
        write(lo, hi);
        uint32_t at = first + lo, end = first + hi;
        while (published.load(std::memory_order_acquire) != at) {}
        // sfence: stores into write-combined memory are not ordered by x86's TSO. Release:
        // the chunk's task stores before tail; pairs with the workers' ld.acquire.sys.
        _mm_sfence();
        __atomic_store_n(tail, end, __ATOMIC_RELEASE);
        published.store(end, std::memory_order_release);
      }
      done.fetch_add(1, std::memory_order_acq_rel);
    }
  }
  void write(uint32_t lo, uint32_t hi) {
    for (uint32_t i = lo; i < hi; ) {
      uint32_t s = (first + i) & (CAP - 1), run = std::min(hi - i, (uint32_t)CAP - s);
      if (build) {
        for (uint32_t k = 0; k < run; ++k) {
          Task* t = (Task*)(ring + (size_t)(s + k) * stride);
          size_t j = (size_t)((first + i + k) % N);
          t->x = x + j * SLICE; t->y = y + j * SLICE; t->n = SLICE; t->kind = kind;
          memset(t->pad, 0, stride - 24);
        }
      } else {
        memcpy(ring + (size_t)s * stride, src + (size_t)i * stride, (size_t)run * stride);
      }
      i += run;
    }
  }
  void start(int threads) { n = threads; for (int i = 0; i < threads; ++i) ts.emplace_back([this, i] { work(i); }); }
  void run() { done.store(0); go.fetch_add(1, std::memory_order_acq_rel); }
  void wait() { while (done.load(std::memory_order_acquire) != n) {} }
  ~Pool() { quit = true; for (auto& t : ts) t.join(); }
};

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  CU(cuInit(0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaFree(0));
  const int sms = prop.multiProcessorCount;
  printf("%s, %d SMs; host: %u hardware threads\n", prop.name, sms, std::thread::hardware_concurrency());
  const size_t floats = (size_t)N * SLICE;
  float *x, *y; CK(cudaMalloc(&x, floats * 4)); CK(cudaMalloc(&y, floats * 4));
  CK(cudaMemset(x, 0, floats * 4)); CK(cudaMemset(y, 0, floats * 4));
  std::vector<Task> noops(N), axpys(N);
  std::vector<Task32> noops32(N), axpys32(N);
  for (int i = 0; i < N; ++i) {
    axpys[i] = Task{x + (size_t)i * SLICE, y + (size_t)i * SLICE, SLICE, 1, {}};
    noops[i] = axpys[i]; noops[i].kind = 0;
    axpys32[i] = Task32{x + (size_t)i * SLICE, y + (size_t)i * SLICE, SLICE, 1, {}};
    noops32[i] = axpys32[i]; noops32[i].kind = 0;
  }
  Task *ring_dev, *staging, *zc, *zc_wc, *zc_d, *zc_wc_d;
  CK(cudaMalloc(&ring_dev, (size_t)CAP * 64));
  CK(cudaHostAlloc(&staging, (size_t)CAP * 64, cudaHostAllocDefault));
  CK(cudaHostAlloc(&zc, (size_t)CAP * 64, cudaHostAllocMapped));
  CK(cudaHostAlloc(&zc_wc, (size_t)CAP * 64, cudaHostAllocMapped | cudaHostAllocWriteCombined));
  CK(cudaHostGetDevicePointer(&zc_d, zc, 0)); CK(cudaHostGetDevicePointer(&zc_wc_d, zc_wc, 0));
  memset(staging, 0, (size_t)CAP * 64); memset(zc, 0, (size_t)CAP * 64); memset(zc_wc, 0, (size_t)CAP * 64);
  uint32_t *stamps, *stamps_d, *htail, *htail_d, *mailbox;
  CK(cudaHostAlloc(&stamps, STAMPS * 4, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&stamps_d, stamps, 0));
  CK(cudaHostAlloc(&htail, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&htail_d, htail, 0));
  CK(cudaHostAlloc(&mailbox, CAP * 4, cudaHostAllocDefault));
  uint32_t* dtail; CK(cudaGetSymbolAddress((void**)&dtail, g_tail));
  cudaStream_t ks, ts; CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking));
  const size_t copy_bytes = floats * 4 * 3 / 2;
  char *ca, *cb; CK(cudaMalloc(&ca, copy_bytes)); CK(cudaMalloc(&cb, copy_bytes));

  // References.
  double copy_us, h2d_us, memcpy1_us, memcpy4_us;
  {
    std::vector<double> c, h, m1, m4;
    Task* dst = staging;
    for (int r = 0; r < 56; ++r) {
      auto a = clk::now(); CK(cudaMemcpyAsync(cb, ca, copy_bytes, cudaMemcpyDeviceToDevice, ks)); CK(cudaStreamSynchronize(ks));
      auto b = clk::now(); CK(cudaMemcpyAsync(ring_dev, staging, (size_t)N * 64, cudaMemcpyHostToDevice, ks)); CK(cudaStreamSynchronize(ks));
      auto d = clk::now(); memcpy(dst, axpys.data(), (size_t)N * 64);
      auto e = clk::now();
      std::vector<std::thread> th;
      for (int k = 0; k < 4; ++k) th.emplace_back([&, k] { size_t lo = (size_t)N * k / 4, hi = (size_t)N * (k + 1) / 4; memcpy(dst + lo, axpys.data() + lo, (hi - lo) * 64); });
      for (auto& t : th) t.join();
      auto f = clk::now();
      if (r >= 5) { c.push_back(us(a, b)); h.push_back(us(b, d)); m1.push_back(us(d, e)); m4.push_back(us(e, f)); }
    }
    copy_us = median(c); h2d_us = median(h); memcpy1_us = median(m1); memcpy4_us = median(m4);
    printf("device copy of the axpy's bytes: %.1f us; cudaMemcpy of 1.28 MB host to device: %.1f us (%.1f GB/s)\n", copy_us, h2d_us, N * 64 / h2d_us / 1e3);
    for (size_t bytes : {(size_t)4096 * 64, (size_t)N * 64}) {
      std::vector<double> hp, hq;
      std::vector<char> pageable(bytes, 1);
      for (int r = 0; r < 56; ++r) {
        auto a = clk::now(); CK(cudaMemcpyAsync(ring_dev, staging, bytes, cudaMemcpyHostToDevice, ts)); CK(cudaStreamSynchronize(ts));
        auto b = clk::now(); CK(cudaMemcpy(ring_dev, pageable.data(), bytes, cudaMemcpyHostToDevice));
        auto d = clk::now(); if (r >= 5) { hp.push_back(us(a, b)); hq.push_back(us(b, d)); }
      }
      printf("host to device, %zu KB: from pinned %.1f us (%.1f GB/s), from pageable %.1f us\n", bytes >> 10, median(hp), bytes / median(hp) / 1e3, median(hq));
    }
    printf("memcpy of 1.28 MB pageable -> pinned: %.1f us on 1 thread (%.1f GB/s); 4 threads, incl. their start: %.1f us\n", memcpy1_us, N * 64 / memcpy1_us / 1e3, memcpy4_us);
    std::vector<double> m32;
    for (int r = 0; r < 56; ++r) {
      auto d = clk::now(); memcpy(dst, axpys32.data(), (size_t)N * 32);
      auto e = clk::now(); if (r >= 5) m32.push_back(us(d, e));
    }
    printf("memcpy of 640 KB (20,000 32-byte records) pageable -> pinned: %.1f us on 1 thread\n", median(m32));
  }

  std::vector<V> vs = {
      {"round trip, zc", ZC, false, 1, true, 1, 1},
      {"round trip, zc+relay", ZC_RELAY, false, 1, true, 1, 1},
      {"round trip, copy+wv", COPY_WV, false, 1, true, 1, 1},
      {"copy+memcpy", COPY_MEMCPY, false, 1, false, 4096, N},
      {"copy+wv", COPY_WV, false, 1, false, 4096, N},
      {"copy+wv, build", COPY_WV, false, 1, true, 4096, N},
      {"zc", ZC, false, 1, false, 4096, N},
      {"zc+relay", ZC_RELAY, false, 1, false, 4096, N},
      {"zc+relay, build", ZC_RELAY, false, 1, true, 4096, N},
      {"zc+relay, build, 1024", ZC_RELAY, false, 1, true, 1024, N},
      {"zc+relay, wc, build", ZC_RELAY, true, 1, true, 4096, N},
      {"zc+relay x2, build", ZC_RELAY, false, 2, true, 1024, N},
      {"zc+relay x4, build", ZC_RELAY, false, 4, true, 1024, N},
      {"zc+relay x4", ZC_RELAY, false, 4, false, 1024, N},
      {"zc+relay x8, build", ZC_RELAY, false, 8, true, 512, N},
      {"zc+relay x8", ZC_RELAY, false, 8, false, 512, N},
      {"zc+relay, build, 32B", ZC_RELAY, false, 1, true, 1024, N, 32},
      {"zc+relay, 32B", ZC_RELAY, false, 1, false, 1024, N, 32},
      {"zc+relay x4, 32B", ZC_RELAY, false, 4, false, 1024, N, 32},
      {"zc+relay x8, build, 32B", ZC_RELAY, false, 8, true, 512, N, 32},
      {"zc+relay x8, 32B", ZC_RELAY, false, 8, false, 512, N, 32},
      {"zc+relay x8, 32B, 1024", ZC_RELAY, false, 8, false, 1024, N, 32},
      {"zc+relay x12, 32B", ZC_RELAY, false, 12, false, 512, N, 32},
      {"zc+relay x8, build (again)", ZC_RELAY, false, 8, true, 512, N},
      {"copy+memcpy (again)", COPY_MEMCPY, false, 1, false, 4096, N},
  };
  printf("%-24s %6s %10s %10s %8s\n", "publish", "chunk", "noop us", "axpy us", "% copy");
  double rt_us = 0;
  for (const V& v : vs) {
    double res[2] = {0, 0};
    for (int kind = 0; kind < (v.nb == 1 ? 1 : 2); ++kind) {
      const char* src = v.stride == 32 ? (const char*)(kind ? axpys32 : noops32).data() : (const char*)(kind ? axpys : noops).data();
      const int warm = 5, runs = 51;
      const uint32_t total = (uint32_t)(warm + runs) * v.nb;
      unsigned zero = 0;
      CK(cudaMemcpyToSymbol(g_head, &zero, 4)); CK(cudaMemcpyToSymbol(g_tail, &zero, 4));
      std::vector<unsigned> zs(STAMPS, 0); CK(cudaMemcpyToSymbol(g_counts, zs.data(), STAMPS * 4));
      memset(stamps, 0, STAMPS * 4); *(volatile uint32_t*)htail = 0;
      CK(cudaDeviceSynchronize());
      const bool zcm = v.publish == ZC || v.publish == ZC_RELAY;
      Task* host_ring = zcm ? (v.wc ? zc_wc : zc) : staging;
      const Task* dev_ring = zcm ? (v.wc ? zc_wc_d : zc_d) : ring_dev;
      uint32_t* tail = v.publish == ZC ? htail_d : dtail;
      persistent<<<sms * 2, 256, 0, ks>>>((const char*)dev_ring, v.stride, tail, stamps_d, total, v.nb, v.publish == ZC_RELAY ? htail_d : nullptr);
      CK(cudaGetLastError());
      Pool pool;
      pool.ring = (char*)host_ring; pool.stride = v.stride; pool.tail = htail; pool.src = src; pool.chunk = v.chunk; pool.nb = v.nb;
      pool.build = v.build; pool.x = x; pool.y = y; pool.kind = kind;
      if (zcm) pool.start(v.threads);
      std::vector<double> t;
      uint32_t next = 0;
      const uint32_t nseg = (v.nb + SEG - 1) / SEG;
      for (int r = 0; r < warm + runs; ++r) {
        const uint32_t first = next, end = next + v.nb;
        auto a = clk::now();
        if (zcm) {
          pool.first = first; pool.published.store(first, std::memory_order_release);
          pool.run();
        } else {
          Pool one; one.ring = (char*)staging; one.src = src; one.first = first; one.nb = v.nb;
          one.build = v.build; one.x = x; one.y = y; one.kind = kind;
          for (uint32_t at = first; at < end; at += v.chunk) {
            uint32_t e = std::min(end, at + v.chunk);
            one.write(at - first, e - first);
            uint32_t s = at & (CAP - 1), n = e - at, n1 = std::min(n, (uint32_t)CAP - s);
            CK(cudaMemcpyAsync(ring_dev + s, staging + s, (size_t)n1 * 64, cudaMemcpyHostToDevice, ts));
            if (n > n1) CK(cudaMemcpyAsync(ring_dev, staging, (size_t)(n - n1) * 64, cudaMemcpyHostToDevice, ts));
            if (v.publish == COPY_MEMCPY) {
              uint32_t* m = &mailbox[(e - 1) & (CAP - 1)]; *(volatile uint32_t*)m = e;
              CK(cudaMemcpyAsync(dtail, m, 4, cudaMemcpyHostToDevice, ts));
            } else {
              CU(cuStreamWriteValue32((CUstream)ts, (CUdeviceptr)dtail, (cuuint32_t)e, 0));
            }
          }
        }
        const uint32_t b = first / v.nb;
        auto s0 = clk::now();
        for (uint32_t s = 0; s < nseg; ++s) {
          const uint32_t id = b * nseg + s;
          while (((volatile uint32_t*)stamps)[id % STAMPS] != id + 1)
            if (clk::now() - s0 > std::chrono::seconds(2)) { printf("stalled: %s, batch %u, segment %u\n", v.name, b, s); return 1; }
        }
        auto z = clk::now();
        if (zcm) pool.wait();
        if (r >= warm) t.push_back(us(a, z));
        next = end;
      }
      CK(cudaStreamSynchronize(ks)); CK(cudaStreamSynchronize(ts));
      res[kind] = median(t);
    }
    if (v.nb == 1) {
      if (v.publish == ZC_RELAY) rt_us = res[0];
      printf("%-24s %6u %10.2f %10s %8s\n", v.name, v.chunk, res[0], "-", "-");
    } else {
      printf("%-24s %6u %10.1f %10.1f %7.0f%%\n", v.name, v.chunk, res[0], res[1], 100 * copy_us / res[1]);
    }
  }
  printf("the host-fed bound for the noop batch: 1.2 x (memcpy %.1f + round trip %.2f) = %.1f us, and <= 45 us\n", memcpy1_us, rt_us, 1.2 * (memcpy1_us + rt_us));
  // Results are not checked here: this is a timing floor; the runtime's tests check.
  return 0;
}

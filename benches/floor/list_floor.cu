// What a resident task list of 20,000 axpy tasks could cost at best on this GPU, and
// which part of the runtime's list path costs what: a minimal persistent kernel in CUDA
// C++ (built with nvcc on the GPU machine), not part of the runtime. It answers "is 85%
// of the device copy reachable for a 20k-task batch that the host submits and waits
// for, and what does it take?" for benches/dispatch.rs.
//
//   nvcc -O3 -arch=sm_90 -o list_floor benches/floor/list_floor.cu -lcuda && ./list_floor [features]
//
// The kernel is the runtime's protocol cut to the bone: every warp claims one slot at a
// time (atomicAdd on head, pre-claimed one task ahead), waits for the slot to be
// published (ld.acquire.sys of tail, nanosleep <= 256 ns), reads the 64-byte task in
// place, runs axpy on 1024 floats (8 float4 of x and y per lane, all loads before the
// first use) or nothing (noop), then lane 0 adds 1 to its segment's count (atom.acq_rel
// .gpu; 1024-task segments) and the warp that completes a segment stores its stamp into
// mapped pinned memory after fence.acq_rel.sys. The host publishes a batch as the
// runtime does (device-to-device copies of the list into the ring in pieces, each
// followed by a publication of tail) and spins on the stamps.
//
// Variants (each a row: median us of 51 batches after 5 warm-up, noop and axpy):
//   blocks/SM   1, 2 or 3 blocks of 256 threads per SM
//   publish     memcpy: tail by cudaMemcpyAsync from pinned memory (the runtime's way)
//               wv:     tail by cuStreamWriteValue32 (a stream memory op: no copy engine)
//               direct: no copy of the tasks at all; the kernel reads them from the list
//                       (the slot's list index is seq mod N); tail by cuStreamWriteValue32
//   piece       tasks per piece (0: the whole batch in one piece)
//   features    with `list_floor features`: the direct rows at 2 blocks/SM only, with
//               parts of the runtime's per-task path added (FEAT_* below): which of
//               them the runtime's 18 us over this floor came from (2026-11-24)
// and the two ceilings the runtime's bench measures, the same way (host wall clock
// around launch + synchronize): a device-to-device copy of the same bytes and the axpy
// loop over every slice in one flat launch.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#include <chrono>
#include <cuda.h>
#include <cuda_runtime.h>
#include "floor.cuh"

#define CU(x) do { CUresult err_ = (x); if (err_ != CUDA_SUCCESS) { const char* msg_; cuGetErrorString(err_, &msg_); printf("%s: %s\n", #x, msg_); exit(1); } } while (0)

constexpr int N = 20000, SLICE = 1024, SEG = 1024, CAP = 1 << 16;
constexpr int NSEG = (N + SEG - 1) / SEG;

// pad[0..4]: the buffer-table form of the same slices (handles of x and y: index |
// generation << 16, and element offsets), read by the FEAT_TABLE_* variants.
struct Task { const float* x; float* y; uint32_t n; uint32_t pad[11]; };
// The runtime's buffer-table entry (shared/src/buffer.rs): 16 bytes.
struct __align__(16) Entry { unsigned long long ptr; uint32_t len; uint16_t elem; uint16_t gen; };
// Parts of the runtime's per-task path, added one at a time (`list_floor features`):
enum {
  FEAT_LOOK = 1,        // a look for children before each task: two ld.relaxed.gpu, a vote
  FEAT_TABLE_SYS = 2,   // x and y resolved through the buffer table, each entry read by
                        // volatile field loads (LD.STRONG.SYS) and checked before the next
  FEAT_TABLE_WEAK = 4,  // the same, both entries by one weak ld.global.v2.u64 each, then the checks
  FEAT_FIELDS = 8,      // the task's flag and dependency words read and tested before the task
};
static_assert(sizeof(Task) == 64, "task is 64 bytes");
struct Header { uint32_t head; uint32_t p0[31]; uint32_t tail; uint32_t p1[31]; uint32_t stop; uint32_t p2[31]; };

__device__ __forceinline__ uint32_t ld_rlx_gpu(const uint32_t* p) {
  uint32_t v; asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }

// direct != 0: read task seq from list[seq % N] instead of the ring.
__device__ __forceinline__ bool entry_ok(const Entry& e, uint32_t handle, uint32_t off, uint32_t n) {
  return e.ptr != 0 && e.gen == (handle >> 16) && e.elem == 1 && (unsigned long long)off + n <= e.len;
}

__device__ __forceinline__ Entry ld_entry_weak(const Entry* p) {
  unsigned long long a, b;
  asm volatile("ld.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
  Entry e; e.ptr = a; e.len = (uint32_t)b; e.elem = (uint16_t)(b >> 32); e.gen = (uint16_t)(b >> 48); return e;
}

__device__ __forceinline__ Entry ld_entry_volatile(const Entry* p) {
  const volatile Entry* v = p; Entry e; e.ptr = v->ptr; e.len = v->len; e.elem = v->elem; e.gen = v->gen; return e;
}

__global__ void __launch_bounds__(256) persistent(Header* h, const Task* ring, const Task* list, int direct,
                                                   uint32_t* counts, uint32_t* stamps, int feat,
                                                   const Entry* table, const uint32_t* spawnc) {
  const int lane = threadIdx.x & 31;
  uint32_t tail_seen = 0;
  uint32_t next = 0;
  if (lane == 0) next = atomicAdd(&h->head, 1);
  while (true) {
    uint32_t seq = __shfl_sync(0xffffffff, next, 0);
    if (lane == 0) next = atomicAdd(&h->head, 1);  // pre-claim the next
    unsigned sleep = 32;
    while (!(__all_sync(0xffffffff, (int32_t)(tail_seen - seq) > 0))) {
      tail_seen = ld_acq_sys(&h->tail);
      if (__all_sync(0xffffffff, (int32_t)(tail_seen - seq) > 0)) break;
      if (ld_rlx_gpu(&h->stop)) return;
      __nanosleep(sleep); sleep = min(sleep * 2, 256u);
    }
    const Task* t = direct ? &list[seq % N] : &ring[seq & (CAP - 1)];
    if (feat & FEAT_LOOK) {
      // The spawn ring's two counters on their own lines; never differ here.
      uint32_t e = ld_rlx_gpu(&spawnc[0]), d = ld_rlx_gpu(&spawnc[32]);
      if (__any_sync(0xffffffff, e != d)) asm volatile("trap;");
    }
    if (feat & FEAT_FIELDS) {
      if (__any_sync(0xffffffff, t->pad[4] != 0)) asm volatile("trap;");
      if (__any_sync(0xffffffff, t->pad[5] != 0)) asm volatile("trap;");
    }
    const float* x = t->x;
    float* y = t->y;
    uint32_t n = t->n;
    if (feat & (FEAT_TABLE_SYS | FEAT_TABLE_WEAK)) {
      uint32_t hx = t->pad[0], hy = t->pad[1], ox = t->pad[2], oy = t->pad[3];
      Entry ex, ey = {};
      if (feat & FEAT_TABLE_SYS) {
        // As the runtime did: the second entry is read only once the first passed.
        ex = ld_entry_volatile(&table[hx & 0xfff]);
        bool ok = entry_ok(ex, hx, ox, n);
        if (ok) { ey = ld_entry_volatile(&table[hy & 0xfff]); ok = entry_ok(ey, hy, oy, n); }
        if (!ok) n = 0;
      } else {
        ex = ld_entry_weak(&table[hx & 0xfff]);
        ey = ld_entry_weak(&table[hy & 0xfff]);
        if (!entry_ok(ex, hx, ox, n) || !entry_ok(ey, hy, oy, n)) n = 0;
      }
      x = (const float*)ex.ptr + ox; y = (float*)ey.ptr + oy;
    }
    axpy(1e-3f, x, y, n);
    __syncwarp();
    if (lane == 0) {
      uint32_t i = seq % N, s = i / SEG, len = min(SEG, N - s * SEG);
      uint32_t before = atom_add_acq_rel_gpu(&counts[s], 1);
      if (before + 1 == len) {
        counts[s] = 0;
        asm volatile("fence.acq_rel.sys;" ::: "memory");
        st_rlx_sys(&stamps[s], seq / N + 1);
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

int main(int argc, char** argv) {
  // `list_floor features`: the direct rows only, with parts of the runtime's path added.
  const bool features = argc > 1 && strcmp(argv[1], "features") == 0;
  setvbuf(stdout, nullptr, _IONBF, 0);
  CU(cuInit(0));
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaFree(0));
  int sms = prop.multiProcessorCount;
  int fit; CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, persistent, 256, 0));
  cudaFuncAttributes fa; CK(cudaFuncGetAttributes(&fa, persistent));
  printf("%s, %d SMs; persistent kernel: %d registers, %d blocks of 256 fit per SM\n", prop.name, sms, fa.numRegs, fit);
  CK(cudaFuncGetAttributes(&fa, flat));
  const size_t floats = (size_t)N * SLICE;
  float *x, *y; CK(cudaMalloc(&x, floats * 4)); CK(cudaMalloc(&y, floats * 4));
  std::vector<float> hx(floats); for (size_t i = 0; i < floats; ++i) hx[i] = (i % 977) * 1e-3f;
  CK(cudaMemcpy(x, hx.data(), floats * 4, cudaMemcpyHostToDevice)); CK(cudaMemset(y, 0, floats * 4));
  std::vector<Task> ht(N), hn(N);
  const uint32_t hdx = 1 | 7u << 16, hdy = 2 | 7u << 16;  // table indices 1 and 2, generation 7
  for (int i = 0; i < N; ++i) {
    ht[i] = Task{x + (size_t)i * SLICE, y + (size_t)i * SLICE, SLICE, {hdx, hdy, (uint32_t)i * SLICE, (uint32_t)i * SLICE}};
    hn[i] = ht[i]; hn[i].n = 0;
  }
  Entry htable[4] = {{}, {(unsigned long long)x, (uint32_t)floats, 1, 7}, {(unsigned long long)y, (uint32_t)floats, 1, 7}, {}};
  Entry* table; CK(cudaMalloc(&table, sizeof htable)); CK(cudaMemcpy(table, htable, sizeof htable, cudaMemcpyHostToDevice));
  uint32_t* spawnc; CK(cudaMalloc(&spawnc, 64 * 4)); CK(cudaMemset(spawnc, 0, 64 * 4));
  Task *axl, *nol, *ring; CK(cudaMalloc(&axl, N * 64)); CK(cudaMalloc(&nol, N * 64)); CK(cudaMalloc(&ring, (size_t)CAP * 64));
  CK(cudaMemcpy(axl, ht.data(), N * 64, cudaMemcpyHostToDevice)); CK(cudaMemcpy(nol, hn.data(), N * 64, cudaMemcpyHostToDevice));
  uint32_t* counts; CK(cudaMalloc(&counts, NSEG * 4)); CK(cudaMemset(counts, 0, NSEG * 4));
  uint32_t* stamps; CK(cudaHostAlloc(&stamps, NSEG * 4, cudaHostAllocMapped));
  uint32_t* dstamps; CK(cudaHostGetDevicePointer(&dstamps, stamps, 0));
  uint32_t* mailbox; CK(cudaHostAlloc(&mailbox, CAP * 4, cudaHostAllocDefault));
  cudaStream_t ks, ts; CK(cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&ts, cudaStreamNonBlocking));
  Header* h; CK(cudaMalloc(&h, sizeof(Header)));
  // The copy moves the axpy's bytes (read x and y, write y: 3 x 4 bytes per float):
  // 1.5 x the floats read, 1.5 x written, as benches/dispatch.rs copies.
  const size_t copy_bytes = floats * 4 * 3 / 2;
  char *ca, *cb; CK(cudaMalloc(&ca, copy_bytes)); CK(cudaMalloc(&cb, copy_bytes));

  // Ceilings: host wall clock around launch + synchronize, as benches/dispatch.rs does.
  {
    std::vector<double> c, f;
    for (int r = 0; r < 56; ++r) {
      auto a = clk::now(); CK(cudaMemcpyAsync(cb, ca, copy_bytes, cudaMemcpyDeviceToDevice, ks)); CK(cudaStreamSynchronize(ks));
      auto b = clk::now(); flat<<<(N * 32 + 255) / 256, 256, 0, ks>>>(x, y); CK(cudaStreamSynchronize(ks));
      auto d = clk::now(); if (r >= 5) { c.push_back(us(a, b)); f.push_back(us(b, d)); }
    }
    printf("device copy of the same bytes: %.1f us; axpy loop in one flat launch: %.1f us\n", median(c), median(f));
  }
  double copy_us = 0;
  {
    std::vector<double> c;
    for (int r = 0; r < 56; ++r) {
      auto a = clk::now(); CK(cudaMemcpyAsync(cb, ca, copy_bytes, cudaMemcpyDeviceToDevice, ks)); CK(cudaStreamSynchronize(ks));
      if (r >= 5) c.push_back(us(a, clk::now()));
    }
    copy_us = median(c);
  }
  printf("%9s %8s %6s %8s %10s %10s %8s\n", "blocks/SM", "publish", "piece", "features", "noop us", "axpy us", "% copy");
  struct V { int blocks; int publish; int piece; int feat = 0; };  // publish: 0 memcpy, 1 wv, 2 direct
  std::vector<V> vs;
  // At most 3 of 256 threads per SM: with every block slot taken (4 fit), the
  // device-to-device copies on the transfer stream never ran (the copy stalled, H100).
  for (int b = 1; b <= std::min(3, fit); ++b)
    for (V v : {V{b, 0, 4096}, V{b, 1, 4096}, V{b, 0, 0}, V{b, 1, 0}, V{b, 2, 0}}) vs.push_back(v);
  vs.push_back(V{2, 0, 4096});  // the first again: order check
  if (features) {
    vs.clear();
    for (int f : std::initializer_list<int>{0, FEAT_LOOK, FEAT_FIELDS, FEAT_TABLE_SYS, FEAT_TABLE_WEAK, FEAT_LOOK | FEAT_FIELDS | FEAT_TABLE_SYS,
                  FEAT_LOOK | FEAT_FIELDS | FEAT_TABLE_WEAK, 0})
      vs.push_back(V{2, 2, 0, f});
  }
  const char* pubname[] = {"memcpy", "wv", "direct"};
  for (V v : vs) {
    double res[2];
    for (int kind = 0; kind < 2; ++kind) {
      const Task* list = kind ? axl : nol;
      CK(cudaMemset(h, 0, sizeof(Header))); memset(stamps, 0, NSEG * 4);
      CK(cudaDeviceSynchronize());
      persistent<<<sms * v.blocks, 256, 0, ks>>>(h, ring, list, v.publish == 2, counts, dstamps, v.feat, table, spawnc);
      CK(cudaGetLastError());
      std::vector<double> t;
      uint64_t next = 0;
      for (int r = 0; r < 56; ++r) {
        auto a = clk::now();
        uint64_t first = next, end = next + N;
        int piece = v.piece ? v.piece : N;
        for (uint64_t at = first; at < end; at += piece) {
          uint64_t e = std::min<uint64_t>(end, at + piece);
          if (v.publish != 2) {
            // The ring has room for the whole batch; a run may wrap around its end.
            uint64_t s = at & (CAP - 1), n = e - at, n1 = std::min<uint64_t>(n, CAP - s);
            CK(cudaMemcpyAsync(ring + s, list + (at - first), n1 * 64, cudaMemcpyDeviceToDevice, ts));
            if (n > n1) CK(cudaMemcpyAsync(ring, list + (at - first) + n1, (n - n1) * 64, cudaMemcpyDeviceToDevice, ts));
          }
          if (v.publish == 0) {
            uint32_t* m = &mailbox[(e - 1) & (CAP - 1)]; *(volatile uint32_t*)m = (uint32_t)e;
            CK(cudaMemcpyAsync(&h->tail, m, 4, cudaMemcpyHostToDevice, ts));
          } else {
            CU(cuStreamWriteValue32((CUstream)ts, (CUdeviceptr)&h->tail, (cuuint32_t)e, 0));
          }
        }
        uint32_t want = (uint32_t)(end / N);
        auto start = clk::now();
        for (int s = 0; s < NSEG; ++s)
          while (((volatile uint32_t*)stamps)[s] != want)
            if (clk::now() - start > std::chrono::seconds(2)) { printf("stalled: segment %d of batch %u\n", s, want); return 1; }
        if (r >= 5) t.push_back(us(a, clk::now()));
        next = end;
      }
      CU(cuStreamWriteValue32((CUstream)ts, (CUdeviceptr)&h->stop, 1, 0));
      CK(cudaStreamSynchronize(ks)); CK(cudaStreamSynchronize(ts));
      res[kind] = median(t);
    }
    printf("%9d %8s %6d %8d %10.1f %10.1f %7.0f%%\n", v.blocks, pubname[v.publish], v.piece, v.feat, res[0], res[1], 100 * copy_us / res[1]);
  }
  printf("device copy (again): %.1f us\n", copy_us);
  // Results are not checked here: this is a timing floor; the runtime's tests check.
  return 0;
}

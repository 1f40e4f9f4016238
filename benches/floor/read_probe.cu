// Which way of reading a task record from HOST memory lets a persistent worker's PCIe
// read overlap its task, on this GPU: a minimal persistent kernel in CUDA C++ (built with
// nvcc on the GPU machine), not part of the runtime, for the host-fed path. It has not
// been run on a GPU yet, so its answers are still to come.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o read_probe benches/floor/read_probe.cu -lpthread && ./read_probe
//
// The runtime's workers read each host-fed record over PCIe in series with everything
// else they do (measured with the profiling build: about 3500 of 11000 cycles a noop
// task). A read-ahead of the next record under an early claim did not shorten the task:
// the runtime's task step grew by what the read's own step lost. The
// reading then was that the completion's release add waits for every earlier load of
// the thread, the read-ahead's too. This probe asks the hardware directly, on a loop with
// nothing else in it:
//
//   serial   claim one slot, read its record (lanes 0-3, 16 bytes each: one 64-byte
//            request), run it, complete it (release add, .gpu): the runtime's order
//   ahead    claim the next slot before the task runs and issue plain loads of its
//            record then; use them after the completion. If the release waits for the
//            loads, this is no faster than serial; with a 4-KB axpy body the read has
//            the body's time to complete anyway, so axpy tells whether the loads
//            overlap at all, noop whether the release waits for them
//   cpasync  the same read-ahead by cp.async (16 bytes a lane into a per-warp slot in
//            shared memory), waited for after the completion. PTX ISA 8.9.1.1: its
//            operations are ordered after the thread's prior instructions but are not
//            part of its program order, so by the model the release need not wait for
//            it; whether MEMBAR.ALL.GPU does is the question. In SASS it is LDGSTS,
//            tracked apart from the register scoreboards, which `ahead`'s load is not
//            (its first use of the current record waits on the read-ahead's scoreboard)
//   bulk     the same read-ahead by cp.async.bulk (one 64-byte copy by the TMA unit,
//            completed on an mbarrier), after fence.proxy.async.global (the acquire of
//            `tail` is in the generic proxy, the copy in the async proxy). Bulk copies
//            are "performed in the asynchronous proxy", which a generic release does not
//            order, so by the model the completion need not wait for it; whether the
//            TMA unit reads mapped host memory at all is the other question
//   batchK   claim K consecutive slots (K = 2, 4, 8) and read all K records in one
//            request (lanes 0 .. 4K-1, 16 bytes each), then run them one by one
//
// Each mode runs noop and axpy (1024 floats) batches of N tasks, in two ways:
//   pre      the host writes the whole ring, then launches: the device's pace alone
//   stream   the host (its main thread) writes the ring in chunks while the kernel runs, publishing each
//            with a release store of a tail in mapped memory; a relay warp passes it to
//            a tail in device memory (as the runtime does): every read after an
//            acquire must see the host's writes of that launch
// Every record carries its sequence number and a tag unique to the launch: a read of a
// record from another launch, or of an unwritten one, counts as `bad` (must be 0), and
// the kernel counts completions (must be N: each task once). Figures: median batch time
// (events) of 21 launches after 3 warm-up, and the mean cycles a warp spends per task.
// Stream rows are paced by the host's writing: they check `bad`, not the modes' speed.
//
// Two grids: the runtime's (2 blocks of 8 warps an SM, about 9.5 tasks a warp: many
// reads in flight, where PCIe's request rate may be what binds) and one warp an SM
// (about 150 tasks a warp: each warp's latency per task, where the modes differ if the
// read overlaps anything). `bulk` runs last: if the TMA unit cannot read mapped host
// memory it faults, the context is lost, and the rows before it are kept. Every wait
// gives up with a trap after about 10 s, so a hang costs one mode, not the call. Keep
// the SASS too (cuobjdump -sass read_probe), to check that `ahead`'s load is issued
// before the body and the completion (`asm volatile` fixes the order in PTX only).
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#include "floor.cuh"

constexpr uint32_t N = 20000, SLICE = 1024, CAP = 1u << 15, WARPS = 8, CHUNK = 512;
static_assert(CAP >= N, "one launch never wraps the ring");

struct __align__(16) Rec { const float* x; float* y; uint32_t n; uint32_t kind; uint32_t seq; uint32_t tag; uint32_t pad[8]; };
static_assert(sizeof(Rec) == 64, "a record is 64 bytes, as the runtime's full task");

enum Mode { SERIAL, AHEAD, CPASYNC, BATCH2, BATCH4, BATCH8, BULK };
static const char* mode_name(int m) {
  static const char* names[] = {"serial", "ahead", "cpasync", "batch2", "batch4", "batch8", "bulk"};
  return names[m];
}

__device__ uint32_t g_head, g_tail, g_done, g_bad;
__device__ unsigned long long g_cycles;

__device__ __forceinline__ uint32_t ld_acquire_gpu(const uint32_t* p) {
  uint32_t v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v; }
// The task's completion: a release add, as the runtime's on its segment's count.
__device__ __forceinline__ void complete() {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(&g_done) : "memory"); }
// A plain (weak) 16-byte load, kept where it is written.
__device__ __forceinline__ uint4 ld16(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t smem(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

// The record lanes `4j` .. `4j + 3` hold (16 bytes each), given to every lane; checks it
// is the one that `seq` must read in this launch, and runs it.
__device__ __forceinline__ void run(uint4 c, int j, uint32_t seq, uint32_t gen) {
  const unsigned all = 0xffffffffu;
  uint32_t x0 = __shfl_sync(all, c.x, 4 * j), x1 = __shfl_sync(all, c.y, 4 * j);
  uint32_t y0 = __shfl_sync(all, c.z, 4 * j), y1 = __shfl_sync(all, c.w, 4 * j);
  uint32_t n = __shfl_sync(all, c.x, 4 * j + 1), kind = __shfl_sync(all, c.y, 4 * j + 1);
  uint32_t rseq = __shfl_sync(all, c.z, 4 * j + 1), tag = __shfl_sync(all, c.w, 4 * j + 1);
  // The record's second half carries the tag too (pad[0], pad[4]): a torn or stale
  // 16-byte piece anywhere shows.
  uint32_t tag2 = __shfl_sync(all, c.x, 4 * j + 2), tag3 = __shfl_sync(all, c.x, 4 * j + 3);
  const float* x = (const float*)(((unsigned long long)x1 << 32) | x0);
  float* y = (float*)(((unsigned long long)y1 << 32) | y0);
  const uint32_t want = gen * 2654435761u + seq;
  if (rseq != seq || tag != want || tag2 != want || tag3 != want) {
    if ((threadIdx.x & 31) == 0) atomicAdd(&g_bad, 1u);
  } else if (kind == 1) {
    axpy(1e-3f, x, y, n);
  }
  __syncwarp();
  if ((threadIdx.x & 31) == 0) complete();
  __syncwarp();
}

__device__ __forceinline__ uint32_t claim(uint32_t k) {
  uint32_t s = 0;
  if ((threadIdx.x & 31) == 0) s = atomicAdd(&g_head, k);
  return __shfl_sync(0xffffffffu, s, 0);
}
// Polls before a wait gives up (a trap): at 256 ns a poll, about 10 s.
constexpr uint32_t GIVE_UP = 40u << 20;
// Waits until slot `seq` is published; `seen` is the last tail this warp acquired.
__device__ __forceinline__ void wait_published(uint32_t seq, uint32_t& seen) {
  unsigned sleep = 32;
  for (uint32_t polls = 0; seen <= seq; ++polls) {
    if (polls == GIVE_UP) __trap();
    uint32_t t = 0;
    if ((threadIdx.x & 31) == 0) t = ld_acquire_gpu(&g_tail);
    seen = __shfl_sync(0xffffffffu, t, 0);
    if (seen > seq) break;
    __nanosleep(sleep); sleep = min(sleep * 2, 256u);
  }
}
// Whether slot `seq` is published, polling at most once.
__device__ __forceinline__ bool published(uint32_t seq, uint32_t& seen) {
  if (seen > seq) return true;
  uint32_t t = 0;
  if ((threadIdx.x & 31) == 0) t = ld_acquire_gpu(&g_tail);
  seen = __shfl_sync(0xffffffffu, t, 0);
  return seen > seq;
}
// Lanes 0-3 read record `seq` (one 64-byte request); other lanes hold zeros.
__device__ __forceinline__ uint4 read_now(const Rec* ring, uint32_t seq) {
  const int lane = threadIdx.x & 31;
  uint4 c = make_uint4(0, 0, 0, 0);
  if (lane < 4) c = ld16((const char*)&ring[seq] + 16 * lane);
  return c;
}

template <int MODE>
__global__ void __launch_bounds__(32 * WARPS, 2) persistent(const Rec* ring, const uint32_t* host_tail, uint32_t gen) {
  __shared__ __align__(128) uint4 slots[WARPS][4];
  __shared__ __align__(8) unsigned long long bars[WARPS];
  const int lane = threadIdx.x & 31, warp = threadIdx.x / 32;
  if (host_tail && blockIdx.x == 0 && warp == 0) {
    // The relay. Acquire (.sys) of the host's tail: the host's record stores before its
    // release store of it; release (.gpu) of the device's tail: passes them on to the
    // workers' acquire (cumulativity).
    if (lane == 0) {
      uint32_t last = 0, idle = 0;
      while (last < N) {
        uint32_t t = ld_acq_sys(host_tail);
        if (t != last) { st_rel_gpu(&g_tail, t); last = t; idle = 0; }
        else if (++idle == 4 * GIVE_UP) __trap();
        else __nanosleep(64);
      }
    }
    return;
  }
  uint32_t phase = 0;
  if (MODE == BULK && lane == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(smem(&bars[warp])) : "memory");
    // The init is seen by the async proxy (the TMA unit's complete_tx) before any copy.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncwarp();
  uint32_t seen = 0, tasks = 0;
  const long long t0 = clock64();
  if (MODE == SERIAL) {
    for (;;) {
      uint32_t seq = claim(1);
      if (seq >= N) break;
      wait_published(seq, seen);
      run(read_now(ring, seq), 0, seq, gen);
      ++tasks;
    }
  } else if (MODE == BATCH2 || MODE == BATCH4 || MODE == BATCH8) {
    constexpr uint32_t K = MODE == BATCH2 ? 2 : MODE == BATCH4 ? 4 : 8;
    for (;;) {
      uint32_t first = claim(K);
      if (first >= N) break;
      uint32_t cnt = min(K, N - first);
      wait_published(first + cnt - 1, seen);
      // One request for all `cnt` records: lane l reads 16 bytes `l % 4` of record `l / 4`.
      uint4 c = make_uint4(0, 0, 0, 0);
      if ((uint32_t)lane < 4 * cnt) c = ld16((const char*)&ring[first] + 16 * lane);
      for (uint32_t j = 0; j < cnt; ++j) run(c, (int)j, first + j, gen);
      tasks += cnt;
    }
  } else {
    // A read-ahead of the next record while this one runs (AHEAD, CPASYNC, BULK).
    uint32_t cur = claim(1);
    if (cur < N) {
      wait_published(cur, seen);
      uint4 c = read_now(ring, cur);
      for (;;) {
        // The early claim (the runtime's PRECLAIM and its hostage trade-off).
        uint32_t nxt = claim(1);
        bool ahead = nxt < N && published(nxt, seen);
        uint4 pre = make_uint4(0, 0, 0, 0);
        if (ahead) {
          const char* src = (const char*)&ring[nxt];
          if (MODE == AHEAD) {
            if (lane < 4) pre = ld16(src + 16 * lane);
          } else if (MODE == CPASYNC) {
            // After the acquire of `tail` in program order: a weak generic-proxy read.
            if (lane < 4)
              asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n\tcp.async.commit_group;"
                           :: "r"(smem(&slots[warp][lane])), "l"(src + 16 * lane) : "memory");
          } else if (MODE == BULK) {
            if (lane == 0) {
              // Cross-proxy: the generic acquire of `tail` before the async-proxy read of
              // the record; the generic reads of the slot (last task) before the async
              // write into it.
              asm volatile("fence.proxy.async.global;\n\tfence.proxy.async.shared::cta;" ::: "memory");
              asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 64;" :: "r"(smem(&bars[warp])) : "memory");
              asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 64, [%2];"
                           :: "r"(smem(&slots[warp][0])), "l"(__cvta_generic_to_global(src)), "r"(smem(&bars[warp])) : "memory");
            }
          }
        }
        run(c, 0, cur, gen);
        ++tasks;
        if (nxt >= N) break;
        if (!ahead) {
          wait_published(nxt, seen);
          c = read_now(ring, nxt);
        } else if (MODE == AHEAD) {
          c = pre;
        } else if (MODE == CPASYNC) {
          asm volatile("cp.async.wait_group 0;" ::: "memory");
          __syncwarp();
          c = make_uint4(0, 0, 0, 0);
          if (lane < 4) c = slots[warp][lane];
          __syncwarp();
        } else {
          if (lane < 4) {
            // Each lane that reads the slot waits on the mbarrier itself (try_wait's
            // acquire, .cta), not through lane 0 and the warp barrier.
            uint32_t done = 0;
            for (uint32_t polls = 0; !done; ++polls) {
              if (polls == GIVE_UP) __trap();
              asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                           : "=r"(done) : "r"(smem(&bars[warp])), "r"(phase) : "memory");
            }
          }
          phase ^= 1;
          __syncwarp();
          c = make_uint4(0, 0, 0, 0);
          if (lane < 4) c = slots[warp][lane];
          __syncwarp();
        }
        cur = nxt;
      }
    }
  }
  const long long t1 = clock64();
  if (lane == 0 && tasks) atomicAdd(&g_cycles, (unsigned long long)(t1 - t0));
}

// Writes record `seq` of launch `gen`.
static void write_rec(Rec* ring, uint32_t seq, uint32_t gen, uint32_t kind, float* x, float* y) {
  Rec& r = ring[seq];
  r.x = x + (size_t)seq * SLICE; r.y = y + (size_t)seq * SLICE; r.n = SLICE; r.kind = kind;
  r.seq = seq; r.tag = gen * 2654435761u + seq;
  memset(r.pad, 0, sizeof r.pad);
  r.pad[0] = r.pad[4] = r.tag;
}

typedef void (*Kernel)(const Rec*, const uint32_t*, uint32_t);
static Kernel kernel(int m) {
  switch (m) {
    case SERIAL: return persistent<SERIAL>;
    case AHEAD: return persistent<AHEAD>;
    case CPASYNC: return persistent<CPASYNC>;
    case BULK: return persistent<BULK>;
    case BATCH2: return persistent<BATCH2>;
    case BATCH4: return persistent<BATCH4>;
    default: return persistent<BATCH8>;
  }
}

int main() {
  setvbuf(stdout, nullptr, _IONBF, 0);
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  CK(cudaFree(0));
  const int sms = prop.multiProcessorCount;
  int khz = 0; CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  printf("%s, %d SMs, clock %d kHz; grids: %d blocks x %u warps, %d x 1\n", prop.name, sms, khz, 2 * sms, WARPS, sms);
  float *x, *y;
  CK(cudaMalloc(&x, (size_t)N * SLICE * 4)); CK(cudaMalloc(&y, (size_t)N * SLICE * 4));
  CK(cudaMemset(x, 0, (size_t)N * SLICE * 4)); CK(cudaMemset(y, 0, (size_t)N * SLICE * 4));
  Rec *ring, *ring_d;
  CK(cudaHostAlloc(&ring, (size_t)CAP * sizeof(Rec), cudaHostAllocMapped));
  CK(cudaHostGetDevicePointer(&ring_d, ring, 0));
  memset(ring, 0, (size_t)CAP * sizeof(Rec));
  uint32_t *htail, *htail_d;
  CK(cudaHostAlloc(&htail, 64, cudaHostAllocMapped)); CK(cudaHostGetDevicePointer(&htail_d, htail, 0));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  uint32_t gen = 1;
  printf("%-8s %-6s %-4s %-6s %10s %12s %6s %6s\n", "mode", "warps", "kind", "pub", "batch us", "cycles/task", "bad", "done");
  for (int m = SERIAL; m <= BULK; ++m)
   for (int light = 0; light < 2; ++light)
    for (int stream = 0; stream < 2; ++stream)
      for (uint32_t kind = 0; kind < 2; ++kind) {
        const int blocks = light ? sms : 2 * sms, warps = light ? 1 : (int)WARPS;
        std::vector<double> times, cycles;
        uint32_t bad_total = 0, done_wrong = 0;
        for (int rep = 0; rep < 24; ++rep, ++gen) {
          const uint32_t zero = 0, all = N;
          CK(cudaMemcpyToSymbol(g_head, &zero, 4)); CK(cudaMemcpyToSymbol(g_done, &zero, 4));
          CK(cudaMemcpyToSymbol(g_bad, &zero, 4));
          const unsigned long long zero64 = 0;
          CK(cudaMemcpyToSymbol(g_cycles, &zero64, 8));
          if (!stream) {
            for (uint32_t i = 0; i < N; ++i) write_rec(ring, i, gen, kind, x, y);
            CK(cudaMemcpyToSymbol(g_tail, &all, 4));
          } else {
            CK(cudaMemcpyToSymbol(g_tail, &zero, 4));
            __atomic_store_n(htail, 0u, __ATOMIC_RELEASE);
          }
          CK(cudaDeviceSynchronize());
          CK(cudaEventRecord(e0, s));
          kernel(m)<<<blocks, 32 * warps, 0, s>>>(ring_d, stream ? htail_d : nullptr, gen);
          CK(cudaGetLastError());
          CK(cudaEventRecord(e1, s));
          if (stream) {
            // Chunks published in order while the kernel runs. Release: the chunk's
            // record stores before `tail`; pairs with the relay's ld.acquire.sys.
            for (uint32_t lo = 0; lo < N; lo += CHUNK) {
              uint32_t hi = std::min(N, lo + CHUNK);
              for (uint32_t i = lo; i < hi; ++i) write_rec(ring, i, gen, kind, x, y);
              __atomic_store_n(htail, hi, __ATOMIC_RELEASE);
            }
          }
          CK(cudaEventSynchronize(e1));
          float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
          uint32_t bad, done; unsigned long long cyc;
          CK(cudaMemcpyFromSymbol(&bad, g_bad, 4)); CK(cudaMemcpyFromSymbol(&done, g_done, 4));
          CK(cudaMemcpyFromSymbol(&cyc, g_cycles, 8));
          bad_total += bad; done_wrong += done != N;
          if (rep >= 3) { times.push_back(ms * 1e3); cycles.push_back((double)cyc / N); }
        }
        printf("%-8s %-6d %-4s %-6s %10.1f %12.0f %6u %6s\n", mode_name(m), blocks * warps, kind ? "axpy" : "noop", stream ? "stream" : "pre",
               median(times), median(cycles), bad_total, done_wrong ? "WRONG" : "ok");
      }
  return 0;
}

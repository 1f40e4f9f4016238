"""PyTorch's NCCL all-reduce (what a user would otherwise call), two processes, one per
GPU, f32 sum in place: median time per call and the bus bandwidth nccl-tests reports
(bus = alg x 2(n-1)/n), at the sizes of benches/multi.rs's NCCL rows.

    python3 tools/gpu/nccl_torch.py        # on a machine with two GPUs
"""
import os, statistics, time
import torch, torch.distributed as dist, torch.multiprocessing as mp

SIZES = [1 << 20, 16 << 20, 128 << 20, 512 << 20]

def run(rank, n):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29531")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    for b in SIZES:
        x = torch.ones(b // 4, device="cuda", dtype=torch.float32)
        ts = []
        for i in range(25):
            torch.cuda.synchronize(); s = time.perf_counter()
            dist.all_reduce(x); torch.cuda.synchronize()
            if i >= 5: ts.append(time.perf_counter() - s)
        t = statistics.median(ts)
        if rank == 0:
            alg = b / t / 1e9
            print(f"torch NCCL all-reduce {b:>10} bytes {t*1e6:9.1f} us  algbw {alg:7.1f} GB/s  busbw {alg*2*(n-1)/n:7.1f} GB/s  (torch {torch.__version__}, NCCL {torch.cuda.nccl.version()})", flush=True)
    dist.destroy_process_group()

if __name__ == "__main__":
    n = torch.cuda.device_count()
    mp.spawn(run, args=(n,), nprocs=n)

"""What another process gets of the GPU: a bf16 GEMM (TFLOP/s) and a memory-bound add
(GB/s), each timed with CUDA events over about `seconds` (medians of 5 parts).
    python3 tools/gpu/neighbour.py [seconds] [label]"""
import sys, statistics, torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
label = sys.argv[2] if len(sys.argv) > 2 else ""
torch.backends.cuda.matmul.allow_tf32 = False
n = 8192
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
x = torch.randn(1 << 28, device="cuda")  # 1 GiB
y = torch.randn(1 << 28, device="cuda")
z = torch.empty_like(x)


def rate(step, work, seconds):
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); step(); e.record(); torch.cuda.synchronize()
    per = max(s.elapsed_time(e) / 1e3, 1e-6)
    reps = max(1, int(seconds / 5 / per))
    parts = []
    for _ in range(5):
        s.record()
        for _ in range(reps):
            step()
        e.record(); torch.cuda.synchronize()
        parts.append(work * reps / (s.elapsed_time(e) / 1e3))
    return statistics.median(parts)


gemm = rate(lambda: torch.mm(a, b), 2 * n**3, secs / 2) / 1e12
add = rate(lambda: torch.add(x, y, out=z), 3 * x.numel() * 4, secs / 2) / 1e9
print(f"neighbour {label:<28} gemm {gemm:7.1f} TFLOP/s   add {add:7.1f} GB/s", flush=True)

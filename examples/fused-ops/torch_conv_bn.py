#!/usr/bin/env python3
"""The fused conv + batch-norm example's problem in PyTorch (cuDNN), for comparison.

Times conv2d(3x3, padding 1) + batch_norm(training=True) + relu in fp32 with TF32 off
and on (cudnn.benchmark picks the algorithm), eagerly and replayed from a CUDA Graph,
and compares numerics against an f64 reference computed on the GPU: PyTorch's own
outputs and, when given the Rust example's dump, the fused persistent kernel's.

    # on the GPU machine, next to the example's binary:
    RESIDENT_DUMP=/tmp/cbn ./fused_conv_bn        # or: cargo run --release --example fused_conv_bn
    python3 examples/torch_conv_bn.py /tmp/cbn

Without a directory it draws random inputs of the example's GPU size and reports
PyTorch alone. Needs torch with CUDA, and numpy; no network.
"""

import json
import pathlib
import sys

import numpy as np
import torch
import torch.nn.functional as F

WARMUP, RUNS = 5, 21


def load(d):
    meta = json.loads((d / "meta.json").read_text())
    n, ci, co, h, w = (meta[k] for k in ("n", "c_in", "c_out", "h", "w"))

    def arr(name, shape):
        return torch.from_numpy(np.fromfile(d / name, dtype="<f4").reshape(shape))

    inputs = dict(x=arr("x.f32", (n, ci, h, w)), w=arr("w.f32", (co, ci, 3, 3)), gamma=arr("gamma.f32", (co,)), beta=arr("beta.f32", (co,)))
    rust = dict(out=arr("out.f32", (n, co, h, w)), mean=arr("mean.f32", (co,)), var=arr("var.f32", (co,)))
    return meta, inputs, rust


def random_inputs():
    n, ci, co, h, w = 32, 64, 64, 56, 56
    g = torch.Generator().manual_seed(0)
    scale = 1.0 / (ci * 9) ** 0.5
    meta = dict(n=n, c_in=ci, c_out=co, h=h, w=w, eps=1e-5)
    inputs = dict(
        x=torch.rand(n, ci, h, w, generator=g) * 2 - 1,
        w=(torch.rand(co, ci, 3, 3, generator=g) * 2 - 1) * scale,
        gamma=torch.rand(co, generator=g) + 0.5,
        beta=torch.rand(co, generator=g) - 0.5,
    )
    return meta, inputs, None


def conv_bn(x, w, gamma, beta, eps):
    y = F.conv2d(x, w, padding=1)
    return F.relu(F.batch_norm(y, None, None, gamma, beta, training=True, eps=eps)), y


def stats(y):
    # Batch mean and biased variance per channel, as batch_norm(training=True) uses.
    return y.mean(dim=(0, 2, 3)), y.var(dim=(0, 2, 3), unbiased=False)


def time_ms(fn):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(RUNS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def errors(got, want):
    d = got.double() - want
    return (d.norm() / want.norm()).item(), d.abs().max().item()


def main():
    if not torch.cuda.is_available():
        sys.exit("needs a CUDA GPU")
    dump = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else None
    meta, cpu_inputs, rust = load(dump) if dump else random_inputs()
    eps = float(meta["eps"])
    dev = torch.device("cuda")
    t = {k: v.to(dev) for k, v in cpu_inputs.items()}
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    print(f"conv 3x3 + batch norm (training) + ReLU, fp32: {meta['n']}x{meta['c_in']}x{meta['h']}x{meta['w']} -> {meta['c_out']} channels")

    # f64 reference on the GPU.
    with torch.no_grad():
        t64 = {k: v.double() for k, v in t.items()}
        ref_out, ref_y = conv_bn(t64["x"], t64["w"], t64["gamma"], t64["beta"], eps)
        ref_mean, ref_var = stats(ref_y)
        del ref_y

    torch.backends.cudnn.benchmark = True
    flops = 2.0 * meta["n"] * meta["c_out"] * meta["h"] * meta["w"] * meta["c_in"] * 9
    results = {}
    with torch.no_grad():
        for tf32 in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            name = "cuDNN fp32, TF32 " + ("on" if tf32 else "off")
            out, y = conv_bn(t["x"], t["w"], t["gamma"], t["beta"], eps)
            rel, mx = errors(out, ref_out)
            eager = time_ms(lambda: conv_bn(t["x"], t["w"], t["gamma"], t["beta"], eps))
            # The same ops captured once into a CUDA Graph and replayed.
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    conv_bn(t["x"], t["w"], t["gamma"], t["beta"], eps)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                graph_out, _ = conv_bn(t["x"], t["w"], t["gamma"], t["beta"], eps)
            graphed = time_ms(g.replay)
            grel, _ = errors(graph_out, ref_out)
            results[name] = (eager, graphed)
            print(f"  {name}: vs f64 relative {rel:.2e} (max abs {mx:.2e}; graph replay {grel:.2e}); "
                  f"eager {eager:.3f} ms ({flops / eager / 1e9:.2f} TFLOP/s), graph replay {graphed:.3f} ms")

    if rust is not None:
        rel, mx = errors(rust["out"].to(dev), ref_out)
        mrel = ((rust["mean"].to(dev).double() - ref_mean).abs() / ref_var.sqrt()).max().item()
        vrel = ((rust["var"].to(dev).double() - ref_var).abs() / ref_var).max().item()
        print(f"  resident fused (from {dump}): vs f64 relative {rel:.2e} (max abs {mx:.2e}); batch mean {mrel:.2e} of the std, var {vrel:.2e} relative")
        fused = meta.get("fused_ms")
        if fused:
            print(f"  resident fused: {fused:.3f} ms ({flops / fused / 1e9:.2f} TFLOP/s; host wall clock, submit to completion)")
            for k in ("launches", "graph"):
                if f"{k}_ms" in meta:
                    print(f"  resident unfused, {k}: {meta[k + '_ms']:.3f} ms")
            for name, (eager, graphed) in results.items():
                print(f"  fused / {name}: {fused / eager:.2f}x the eager time, {fused / graphed:.2f}x the graph replay")


if __name__ == "__main__":
    main()

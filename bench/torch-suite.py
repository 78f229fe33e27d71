#!/usr/bin/env python3
"""torch-suite.py: what PyTorch takes for each task of examples/tasks.

    python3 bench/torch-suite.py [--no-compile] [--json FILE]

For each task, at its first training shape (read from the task file), the
PyTorch code a user would write for it, eager and (where PyTorch offers a
fused kernel that way) with torch.compile, timed the way kevo times a
kernel: warm-up runs, then repetitions each after an L2 flush (a write of
twice the L2 size), timed with CUDA events, median of the repetitions. It
prints the time in microseconds and the cost model's GB/s and GFLOP/s (the
same expressions as the task file's), and with --json writes them to FILE
for bench/search-suite.sh, which divides PyTorch's time by the champion's
measured in the same session on the same GPU.

Needs a GPU and PyTorch.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
TASKS = os.path.join(HERE, "..", "examples", "tasks")


def first_shape(task):
    with open(os.path.join(TASKS, task + ".json")) as f:
        t = json.load(f)
    return t["shapes"][0], t["cost"]


def cost(expr, dims):
    return float(eval(expr, {"__builtins__": {}}, dict(dims)))


def flush_buffer():
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    return torch.empty(2 * l2 // 4 + 1, dtype=torch.float32, device="cuda")


def timed(fn, flush, reps=50, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.fill_(1.0)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    times.sort()
    return times[len(times) // 2]


def stencil(x):
    out = x.clone()
    out[1:-1, 1:-1] = 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] +
                              x[1:-1, 2:])
    return out


def nbody(pos, eps2):
    p = pos[:, :3]
    m = pos[:, 3]
    d = p[None, :, :] - p[:, None, :]           # d[i][j] = p_j - p_i
    r2 = (d * d).sum(-1) + eps2
    inv = r2.rsqrt()
    w = m[None, :] * inv * inv * inv
    return (w[:, :, None] * d).sum(1)


def cases():
    """(task, label, make inputs, function, compile it too)."""
    dev = "cuda"
    out = []

    def add(task, label, make, fn, compiled):
        out.append((task, label, make, fn, compiled))

    add("saxpy", "a * x + y",
        lambda d: (torch.randn(d["n"], device=dev),
                   torch.randn(d["n"], device=dev), 1.5),
        lambda x, y, a: torch.add(y, x, alpha=a), False)
    add("reduce_sum", "torch.sum",
        lambda d: (torch.rand(d["n"], device=dev),),
        lambda x: x.sum(), False)
    add("transpose", "x.t().contiguous()",
        lambda d: (torch.randn(d["rows"], d["cols"], device=dev),),
        lambda x: x.t().contiguous(), False)
    add("softmax", "torch.softmax",
        lambda d: (4 * torch.randn(d["rows"], d["cols"], device=dev),),
        lambda x: torch.softmax(x, -1), True)
    add("layernorm", "F.layer_norm",
        lambda d: (1 + 2 * torch.randn(d["rows"], d["cols"], device=dev),
                   torch.rand(d["cols"], device=dev) + 0.5,
                   torch.rand(d["cols"], device=dev) * 2 - 1),
        lambda x, g, b: F.layer_norm(x, (x.shape[1],), g, b, 1e-5), True)
    add("stencil2d", "5-point Jacobi step (slices)",
        lambda d: (torch.randn(d["ny"], d["nx"], device=dev),),
        stencil, True)
    add("sgemm", "torch.matmul (fp32, no TF32)",
        lambda d: (torch.rand(d["m"], d["k"], device=dev) * 2 - 1,
                   torch.rand(d["k"], d["n"], device=dev) * 2 - 1),
        torch.matmul, False)
    add("nbody", "all pairs, broadcast",
        lambda d: (torch.rand(d["n"], 4, device=dev) + 0.5, 0.01),
        nbody, True)
    add("histogram", "torch.bincount",
        lambda d: (torch.randint(0, 256, (d["n"],), dtype=torch.uint8,
                                 device=dev),),
        lambda x: torch.bincount(x, minlength=256), False)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true",
                    help="eager only: no torch.compile")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("torch-suite.py: no GPU", file=sys.stderr)
        return 3
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    flush = flush_buffer()
    rows = []
    print("device: %s, torch %s" % (torch.cuda.get_device_name(0),
                                    torch.__version__))
    print("%-11s %-30s %-8s %10s %9s %9s" % ("task", "code", "mode", "us",
                                             "GB/s", "GFLOP/s"))
    for task, label, make, fn, compiled in cases():
        dims, model = first_shape(task)
        inputs = make(dims)
        modes = [("eager", fn)]
        if compiled and not args.no_compile:
            modes.append(("compiled", torch.compile(fn)))
        for mode, f in modes:
            try:
                t = timed(lambda: f(*inputs), flush)
            except Exception as e:  # a compile that fails here
                print("%-11s %-30s %-8s failed: %s" % (task, label, mode,
                                                        str(e)[:80]))
                continue
            b = cost(model["bytes"], dims)
            fl = cost(model["flops"], dims)
            rows.append({"task": task, "code": label, "mode": mode,
                         "dims": dims, "time": t, "gbytes_per_s": b / t / 1e9,
                         "gflops_per_s": fl / t / 1e9})
            print("%-11s %-30s %-8s %10.1f %9.0f %9.1f" % (
                task, label, mode, t * 1e6, b / t / 1e9, fl / t / 1e9))
        del inputs
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0),
                       "torch": torch.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""export-timing.py: does the exported champion run as fast inside PyTorch
as kevo measured it?

For every training shape of a run, the PyTorch package that `kevo export`
wrote is timed on the GPU (CUDA events around one call, the L2 cache
flushed before each call by writing a buffer of twice its size, the GPU
kept busy with torch.cuda._sleep while the call is enqueued so that
Python's own time is not counted, the median of --reps calls), and `kevo
eval --json` times the champion, with the parameters the package picks at
that shape, in the same invocation on the same GPU. The ratio exported /
kevo near 1 says the package launches what kevo measured; the launch
function's own cost (planning, the device-property cache, the scratch
memsets) shows in it.

Usage (on the GPU machine, PyTorch installed):
  kevo export RUN -o PKG
  python3 bench/export-timing.py RUN PKG [--kevo examples/kevo] [--reps 50]
"""
import argparse
import glob
import importlib
import json
import os
import statistics
import subprocess
import sys

import torch

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i8": torch.int8, "u8": torch.uint8,
          "i16": torch.int16, "i32": torch.int32, "i64": torch.int64}


def evaluate(expr, dims):
    return int(eval(str(expr), {"__builtins__": {}},
                    {**dims, "min": min, "max": max}))


def inputs(task, dims):
    """Positional arguments for the package: tensors and drawn scalars."""
    out = []
    for a in task["args"]:
        role = a.get("role")
        if role is None and "value" in a:
            continue
        if role is None:
            out.append(1.0 if a["type"].startswith(("f", "bf")) else 1)
            continue
        n = evaluate(a["count"], dims)
        dt = DTYPES[a["type"]]
        if dt.is_floating_point:
            out.append(torch.randn(n, device="cuda").to(dt))
        else:
            out.append(torch.randint(0, 16, (n,), device="cuda").to(dt))
    return out


def time_call(fn, args, dims, reps):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    # The L2 is flushed as kevo's worker flushes it, by reading a buffer
    # twice its size: clean lines. Writing it (zero_()) would leave the L2
    # full of dirty lines whose write-back the timed kernel then pays for.
    flush = torch.ones(max(2 * l2, 1 << 20) // 4, dtype=torch.int32,
                       device="cuda")
    for _ in range(5):
        fn(*args, **dims)
    times = []
    for _ in range(reps):
        flush.max()
        torch.cuda._sleep(1_000_000)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args, **dims)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return statistics.median(times)


def kevo_times(kevo, run, params):
    """The training shapes' median times of the champion with params,
    by kevo eval --json."""
    cmd = [kevo, "eval", "--json", os.path.join(run, "task.json"),
           os.path.join(run, "best.cu")]
    for k, v in params.items():
        cmd += ["-p", f"{k}={v}"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if not out.stdout.strip():
        sys.exit(f"export-timing: {' '.join(cmd)} failed:\n{out.stderr}")
    res = json.loads(out.stdout)
    times = {}
    for s in res["train"]["shapes"]:
        key = tuple(sorted(s["dims"].items()))
        t = s.get("time") or {}
        times[key] = t.get("median")
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run")
    ap.add_argument("pkg")
    ap.add_argument("--kevo", default=os.environ.get("KEVO", "kevo"))
    ap.add_argument("--reps", type=int, default=50)
    opt = ap.parse_args()
    task = json.load(open(os.path.join(opt.run, "task.json")))
    inits = glob.glob(os.path.join(opt.pkg, "*", "__init__.py"))
    if len(inits) != 1:
        sys.exit(f"export-timing: {opt.pkg} holds no PyTorch package of kevo "
                 "export (kevo export --target torch)")
    name = os.path.basename(os.path.dirname(inits[0]))
    sys.path.insert(0, opt.pkg)
    mod = importlib.import_module(name)
    mod.build()
    fn = getattr(mod, name)
    by_variant = {}
    for dims in task["shapes"]:
        by_variant.setdefault(mod.plan(**dims)["variant"], []).append(dims)
    print(f"{'shape':<36} {'variant':>7} {'kevo (us)':>10} "
          f"{'exported (us)':>14} {'ratio':>6}")
    ratios = []
    for v, shapes in sorted(by_variant.items()):
        kt = kevo_times(opt.kevo, opt.run, mod.VARIANTS[v])
        for dims in shapes:
            t = time_call(fn, inputs(task, dims), dims, opt.reps)
            k = kt.get(tuple(sorted(dims.items())))
            r = t / k if k else float("nan")
            if k:
                ratios.append(r)
            label = ", ".join(f"{d}={dims[d]}" for d in task["dims"])
            print(f"{label:<36} {v:>7} {k * 1e6 if k else float('nan'):>10.2f}"
                  f" {t * 1e6:>14.2f} {r:>6.3f}")
    if ratios:
        gm = statistics.geometric_mean(ratios)
        print(f"geometric mean of exported / kevo: {gm:.3f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""torch-tasks.py: what PyTorch runs for the half-precision tasks of the
kevo task suite, timed on this machine's GPU and scored with each task's own
cost model.

For every training shape (and, with --held-out, every held-out shape) of
gemm_bf16, attention_bf16, rmsnorm_bf16 and gemv_w4a16 (read from the task
files, so the shapes and the cost model are the task's), the PyTorch
implementations below run on inputs drawn as the task draws them:

  gemm_bf16       torch.mm (cuBLAS), bf16 in and out
  attention_bf16  scaled_dot_product_attention with the flash backend, causal
                  or not as the shape says (grouped-query heads through
                  enable_gqa, or K and V repeated to every head beforehand
                  where this PyTorch lacks it), and the cuDNN backend where
                  there is one
  rmsnorm_bf16    the residual add and RMSNorm in eager PyTorch (as Hugging
                  Face's LlamaRMSNorm computes it), F.rms_norm where there is
                  one, and the same function through torch.compile
  gemv_w4a16      the 4-bit weights unpacked and dequantised to fp16, then
                  torch.mm, every call (eager, and through torch.compile);
                  and torch._weight_int4pack_mm (tinygemm) where PyTorch has
                  it, on the same weights in its own layout with bf16
                  activations (timed only: its zero-point convention is not
                  the task's)

Each is timed with CUDA events around one call, after warm-up, the L2 cache
flushed before every call by reading a buffer of twice its size (as kevo
flushes it), captured in a CUDA graph where capture works (so that Python's
launch overhead is not timed; "graph" or "eager" in the output says which),
and the median of --reps calls is reported with its spread (the
interquartile range over the median). Efficiency is the task's roofline
floor, max(bytes / bandwidth, flops / peak, launch latency) with the task's
bytes, flops and peak, over the median: the same formula kevo scores a
kernel with. The ceilings come from `kevo peaks --all --json` (--peaks FILE),
so that the figures compare with kevo's on the same GPU.

Usage (on the GPU machine, PyTorch installed):
  kevo peaks --all --json > peaks.json
  python3 bench/torch-tasks.py --peaks peaks.json [--tasks DIR] [--held-out]
      [--only TASK] [--reps N] [--json OUT]

--json OUT writes every row under "results", and the rows of each task's
first training shape under "rows" in the form of bench/torch-suite.py's
output, so that bench/search-suite.sh can take them as it takes that
script's.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys

TASKS = ("gemm_bf16", "attention_bf16", "rmsnorm_bf16", "gemv_w4a16")

# ---- kevo's integer expressions (kevo_expr_parse(3)) ------------------------

_TOKEN = re.compile(
    r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*|<=|>=|==|!=|&&|\|\||"
    r"[-+*/%()<>!?:,])"
)


def _tokens(text):
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError("cannot read %r at column %d" % (text, pos + 1))
        out.append(m.group(1))
        pos = m.end()
    return out


def _cdiv(a, b):
    """C's division: the quotient truncated toward zero."""
    if b == 0:
        raise ZeroDivisionError("division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_BINARY = {  # operator: (precedence, function)
    "||": (1, lambda a, b: int(bool(a) or bool(b))),
    "&&": (2, lambda a, b: int(bool(a) and bool(b))),
    "==": (3, lambda a, b: int(a == b)),
    "!=": (3, lambda a, b: int(a != b)),
    "<": (4, lambda a, b: int(a < b)),
    "<=": (4, lambda a, b: int(a <= b)),
    ">": (4, lambda a, b: int(a > b)),
    ">=": (4, lambda a, b: int(a >= b)),
    "+": (5, lambda a, b: a + b),
    "-": (5, lambda a, b: a - b),
    "*": (6, lambda a, b: a * b),
    "/": (6, _cdiv),
    "%": (6, lambda a, b: a - _cdiv(a, b) * b),
}

_FUNCS = {
    "min": lambda *a: min(a),
    "max": lambda *a: max(a),
    "ceil_div": lambda a, b: _cdiv(a + b - 1, b),
    "round_up": lambda a, b: _cdiv(a + b - 1, b) * b,
    "abs": lambda a: abs(a),
}


class _Parser:
    def __init__(self, text, names):
        self.toks, self.i, self.names = _tokens(text), 0, names

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise ValueError("expected %r, found %r" % (want, tok))
        self.i += 1
        return tok

    def expr(self):
        cond = self.binary(1)
        if self.peek() == "?":
            self.take("?")
            a = self.expr()
            self.take(":")
            b = self.expr()
            return a if cond else b
        return cond

    def binary(self, level):
        left = self.unary()
        while self.peek() in _BINARY and _BINARY[self.peek()][0] >= level:
            op = self.take()
            prec, fn = _BINARY[op]
            left = fn(left, self.binary(prec + 1))
        return left

    def unary(self):
        tok = self.take()
        if tok == "-":
            return -self.unary()
        if tok == "!":
            return int(not self.unary())
        if tok == "(":
            v = self.expr()
            self.take(")")
            return v
        if tok[0].isdigit():
            return int(tok, 0)
        if tok in _FUNCS and self.peek() == "(":
            self.take("(")
            args = [self.expr()]
            while self.peek() == ",":
                self.take(",")
                args.append(self.expr())
            self.take(")")
            return _FUNCS[tok](*args)
        if tok in self.names:
            return self.names[tok]
        raise ValueError("unknown name %r" % tok)


def evaluate(text, names):
    """Evaluates a kevo expression (a string or a JSON integer)."""
    if isinstance(text, int):
        return text
    p = _Parser(str(text), names)
    v = p.expr()
    if p.peek() is not None:
        raise ValueError("trailing %r in %r" % (p.peek(), text))
    return v


# ---- timing -------------------------------------------------------------------


class Timer:
    def __init__(self, torch, reps, warmup, graphs):
        self.torch, self.reps, self.warmup, self.graphs = torch, reps, warmup, graphs
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 50 << 20)
        self.flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
        self.flush.zero_()

    def _graph(self, fn):
        torch = self.torch
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):
                fn()
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        return graph.replay

    def time(self, fn):
        """Median seconds of one call, the spread, and "graph" or "eager"."""
        torch = self.torch
        for _ in range(self.warmup):
            fn()
        torch.cuda.synchronize()
        run, how = fn, "eager"
        if self.graphs:
            try:
                run, how = self._graph(fn), "graph"
            except Exception:  # capture is not possible for every function
                torch.cuda.synchronize()
                run, how = fn, "eager"
        for _ in range(self.warmup):
            run()
        events = []
        for _ in range(self.reps):
            self.flush.sum()  # reads twice the L2: clean lines, no write-backs
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            events.append((start, end))
        torch.cuda.synchronize()
        ms = sorted(s.elapsed_time(e) for s, e in events)
        med = statistics.median(ms)
        q = statistics.quantiles(ms, n=4) if len(ms) >= 4 else [med, med, med]
        return med * 1e-3, (q[2] - q[0]) / med if med > 0 else 0.0, how


# ---- inputs and the PyTorch implementations ----------------------------------


def gemm_bf16(torch, F, d):
    m, n, k = d["m"], d["n"], d["k"]
    A = torch.randn(m, k, device="cuda").bfloat16()
    B = torch.randn(k, n, device="cuda").bfloat16()
    C = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    yield "torch.mm (cuBLAS)", lambda: torch.mm(A, B, out=C)


def attention_bf16(torch, F, d):
    b, h, hk, s, hd = d["batch"], d["heads"], d["kv_heads"], d["seq"], d["head_dim"]
    causal = d["mask"] == 2
    q = torch.randn(b, h, s, hd, device="cuda").bfloat16()
    k = torch.randn(b, hk, s, hd, device="cuda").bfloat16()
    v = torch.randn(b, hk, s, hd, device="cuda").bfloat16()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def call(backend, kk, vv, gqa):
        extra = {"enable_gqa": True} if gqa else {}

        def fn():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(
                    q, kk, vv, is_causal=causal, **extra
                )

        return fn

    backends = [("flash", SDPBackend.FLASH_ATTENTION)]
    if hasattr(SDPBackend, "CUDNN_ATTENTION"):
        backends.append(("cuDNN", SDPBackend.CUDNN_ATTENTION))
    for label, backend in backends:
        fn = call(backend, k, v, hk != h)
        try:
            fn()
            yield "sdpa " + label, fn
            continue
        except Exception:  # no enable_gqa here, or not for this backend
            pass
        if hk != h:
            kr = k.repeat_interleave(h // hk, dim=1)
            vr = v.repeat_interleave(h // hk, dim=1)
            fn = call(backend, kr, vr, False)
            try:
                fn()
                yield "sdpa %s (K, V repeated to all heads)" % label, fn
            except Exception as e:
                print("  sdpa %s: not available here: %s" % (label, e))


def rmsnorm_bf16(torch, F, d):
    rows, hidden, eps = d["rows"], d["hidden"], 1e-5
    x = torch.randn(rows, hidden, device="cuda").bfloat16()
    r = torch.randn(rows, hidden, device="cuda").bfloat16()
    w = (0.5 + torch.rand(hidden, device="cuda")).bfloat16()

    def hf_style():
        h = x + r
        hf = h.float()
        y = hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps)
        return h, (y * w.float()).bfloat16()

    yield "eager (add, then RMSNorm in fp32)", hf_style
    if hasattr(F, "rms_norm"):

        def f_rms():
            h = x + r
            return h, F.rms_norm(h, (hidden,), w, eps)

        yield "eager (add, F.rms_norm)", f_rms
    yield "torch.compile (add + RMSNorm)", torch.compile(hf_style, dynamic=False)


def _unpack_w4(torch, qb, scales, zeros, k):
    """The task's W (n x k, fp16) from its packed form."""
    n, groups = scales.shape
    q = torch.stack((qb & 15, qb >> 4), dim=-1).reshape(n, -1)
    pad = groups * 128 - q.shape[1]  # >= 0: 2 * ceil(k / 2) <= 128 * groups
    if pad > 0:
        q = torch.nn.functional.pad(q, (0, pad))
    q = q.reshape(n, groups, 128).half()
    w = (q - zeros.half().unsqueeze(-1)) * scales.unsqueeze(-1)
    return w.reshape(n, groups * 128)[:, :k]


def gemv_w4a16(torch, F, d):
    batch, n, k = d["batch"], d["n"], d["k"]
    kb, groups = (k + 1) // 2, (k + 127) // 128
    qb = torch.randint(0, 256, (n, kb), device="cuda", dtype=torch.uint8)
    scales = (0.002 + 0.008 * torch.rand(n, groups, device="cuda")).half()
    zeros = torch.randint(4, 12, (n, groups), device="cuda", dtype=torch.uint8)
    x = torch.randn(batch, k, device="cuda").half()
    y = torch.empty(batch, n, device="cuda", dtype=torch.half)

    def dequant_mm():
        return torch.mm(x, _unpack_w4(torch, qb, scales, zeros, k).t(), out=y)

    yield "eager (dequantise to fp16, then torch.mm)", dequant_mm

    def dequant_mm_alloc():
        return x @ _unpack_w4(torch, qb, scales, zeros, k).t()

    yield "torch.compile (dequantise + matmul)", torch.compile(
        dequant_mm_alloc, dynamic=False
    )
    fused = tinygemm(torch, qb, scales, zeros, x, n, k)
    if fused:
        yield "torch._weight_int4pack_mm (tinygemm, bf16 x)", fused


def tinygemm(torch, qb, scales, zeros, x, n, k):
    """PyTorch's fused int4 matmul on the same weights, or None."""
    if not hasattr(torch, "_weight_int4pack_mm") or k % 128 or n % 8:
        return None
    try:
        packed = torch._convert_weight_to_int4pack(qb.contiguous(), 8)
        sz = torch.stack(
            (scales.float(), (8 - zeros.float()) * scales.float()), dim=-1
        ).transpose(0, 1).contiguous().bfloat16()
        xb = x.bfloat16()

        def fn():
            return torch._weight_int4pack_mm(xb, packed, 128, sz)

        fn()
        return fn
    except Exception as e:
        print("  tinygemm: not available here: %s" % e)
        return None


IMPLS = {
    "gemm_bf16": gemm_bf16,
    "attention_bf16": attention_bf16,
    "rmsnorm_bf16": rmsnorm_bf16,
    "gemv_w4a16": gemv_w4a16,
}

# ---- the run ------------------------------------------------------------------


def floor_seconds(task, dims, peaks):
    cost = task["cost"]
    nbytes = evaluate(cost["bytes"], dims)
    flops = evaluate(cost.get("flops", "0"), dims)
    peak = peaks[cost.get("peak", "fp32")]
    return (
        max(nbytes / peaks["bandwidth"], flops / peak, peaks.get("launch_latency", 0.0)),
        nbytes,
        flops,
    )


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peaks", required=True, help="the output of kevo peaks --all --json")
    ap.add_argument("--tasks", default=os.path.join(here, "..", "examples", "tasks"))
    ap.add_argument("--only", choices=TASKS, action="append")
    ap.add_argument("--held-out", action="store_true", help="the held-out shapes too")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-graphs", action="store_true", help="time without CUDA graphs")
    ap.add_argument("--json", help="also write the results to this file")
    args = ap.parse_args()

    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure", file=sys.stderr)
        return 77
    with open(args.peaks) as f:
        peaks = json.load(f)
    for key in ("bandwidth", "bf16", "fp16", "fp32"):
        if key not in peaks:
            print("%s has no %r: run kevo peaks --all --json" % (args.peaks, key), file=sys.stderr)
            return 2
    device = torch.cuda.get_device_name(0)
    print("%s; PyTorch %s; kevo ceilings of %s: %.0f GB/s, bf16 %.0f, fp16 %.0f TFLOP/s"
          % (device, torch.__version__, peaks.get("device", "?"), peaks["bandwidth"] / 1e9,
             peaks["bf16"] / 1e12, peaks["fp16"] / 1e12))
    timer = Timer(torch, args.reps, args.warmup, not args.no_graphs)
    results = []
    for name in args.only or TASKS:
        with open(os.path.join(args.tasks, name + ".json")) as f:
            task = json.load(f)
        sets = [("train", task["shapes"])]
        if args.held_out:
            sets.append(("held_out", task.get("held_out", [])))
        print("\n%s (peak %s)" % (name, task["cost"].get("peak", "fp32")))
        print("  %-9s %-44s %-44s %10s %7s %6s %7s" % (
            "set", "shape", "PyTorch", "median us", "spread", "timed", "eff"))
        for set_name, shapes in sets:
            for i, dims in enumerate(shapes):
                floor, nbytes, flops = floor_seconds(task, dims, peaks)
                shape = ", ".join("%s=%d" % kv for kv in dims.items())
                torch.manual_seed(1)
                for label, fn in IMPLS[name](torch, F, dims):
                    try:
                        sec, spread, how = timer.time(fn)
                    except Exception as e:
                        print("  %-9s %-44s %-44s failed: %s" % (set_name, shape, label, e))
                        continue
                    eff = floor / sec
                    print("  %-9s %-44s %-44s %10.2f %6.1f%% %6s %7.3f" % (
                        set_name, shape, label, sec * 1e6, 100 * spread, how, eff))
                    results.append({
                        "task": name, "set": set_name, "index": i, "dims": dims,
                        "impl": label, "median_s": sec, "spread": spread,
                        "timed": how, "efficiency": eff, "floor_s": floor,
                        "bytes": nbytes, "flops": flops,
                        "gb_per_s": nbytes / sec / 1e9, "tflop_per_s": flops / sec / 1e12,
                    })
                torch.cuda.empty_cache()
    if args.json:
        # "rows": the first training shape's, in bench/torch-suite.py's form
        # (task, code, mode, dims, time, gbytes_per_s, gflops_per_s), which
        # bench/search-suite.sh reads; "results": every row.
        rows = [{"task": r["task"], "code": r["impl"], "mode": r["timed"],
                 "dims": r["dims"], "time": r["median_s"],
                 "gbytes_per_s": r["gb_per_s"], "gflops_per_s": r["tflop_per_s"] * 1e3}
                for r in results if r["set"] == "train" and r["index"] == 0]
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "peaks": peaks,
                       "rows": rows, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

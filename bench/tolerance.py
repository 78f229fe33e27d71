#!/usr/bin/env python3
"""tolerance.py: where the kernels the industry ships for the half-precision
tasks sit within each task's tolerance, and whether the known-bad shortcuts
still fail it.

For every training and held-out shape (read from the task files) of

  attention_bf16  scaled_dot_product_attention with the flash, cuDNN and
                  memory-efficient backends (grouped-query heads through
                  enable_gqa, or K and V repeated to every head with
                  repeat_interleave where a backend lacks it)
  gemm_bf16       torch.matmul in bf16 (cuBLAS)
  gemv_w4a16      the 4-bit weights dequantised to fp16, then torch.mm (as
                  bench/torch-tasks.py runs it); and, for information only,
                  torch._weight_int4pack_mm (tinygemm), whose bf16
                  activations and bf16 output are a coarser contract than
                  the task's fp16
  rmsnorm_bf16    the residual add and RMSNorm in eager PyTorch (fp32, one
                  rounding) and F.rms_norm where there is one

the inputs are drawn as the task draws them, the reference is computed as
the task's reference kernel computes it (in fp64 here, then rounded once to
the output's type, as the reference rounds its fp32 result), and the worst
error is printed as a fraction of the task's tolerance, computed as kevo
computes it:

  element-wise (rtol, atol, rtol_amax, ulp): the largest over the elements
      of |got - ref| / (atol + rtol |ref| + rtol_amax amax + ulp ulp(ref)),
      ulp(ref) the gap to the next value of larger magnitude in the
      output's type (worker/kernels.cu.h, kv_ulp);
  relative to the baseline (factor F, atol A; attention_bf16): the
      baseline is computed as attention_bf16_base.cu computes it (scaled
      scores rounded to bf16, the softmax of those in fp32, probabilities
      rounded to bf16, P V in fp32, O rounded to bf16); with E its errors,
      the fraction is the larger of max|got - ref| / (F max E + A) and
      mean|got - ref| / (F mean E + A).

A NaN where the reference has none, or an infinity that differs, is an
infinite fraction. The known-bad attention variants (P V accumulated in
bf16 key by key, a tile of keys 64 to 127 dropped, a causal mask off by
one, a softmax in fp16 without its running maximum) run on every shape too;
each must fail on at least one training shape, as kevo judges a kernel.

The exit status is 0 when every industry kernel is at most 0.5 of its
tolerance on every shape and every bad variant fails; 1 otherwise; 77
without a CUDA device.

Usage (on a GPU machine with PyTorch):
  python3 bench/tolerance.py examples/tasks [--only TASK] [--seed N]
      [--json OUT]
  python3 bench/tolerance.py examples/tasks --plan   (no GPU: the shapes
      and the tolerances it would use)
"""

import argparse
import importlib.util
import json
import math
import os
import sys

TASKS = ("attention_bf16", "gemm_bf16", "gemv_w4a16", "rmsnorm_bf16")
MARGIN = 0.5  # an industry kernel may use at most this much of a tolerance


def _torch_tasks():
    """bench/torch-tasks.py as a module (its expression evaluator and its
    gemv helpers)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "torch_tasks", os.path.join(here, "torch-tasks.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- the task's tolerance -----------------------------------------------------


def output_tolerance(task, output):
    """The tolerance of output as kevo reads it: the output's own, else the
    task's; a dict with rtol, atol, rtol_amax, ulp and factor (0: the
    element-wise rule)."""
    tol = task.get("tolerance", {})
    for arg in task["args"]:
        if arg["name"] == output and "tolerance" in arg:
            tol = arg["tolerance"]
    return {k: float(tol.get(k, 0)) for k in ("rtol", "atol", "rtol_amax", "ulp", "factor")}


def tolerance_text(tol):
    if tol["factor"] > 0:
        return "%g x baseline + %g (max and mean)" % (tol["factor"], tol["atol"])
    terms = []
    for key, fmt in (("atol", "%g"), ("rtol", "%g |ref|"),
                     ("rtol_amax", "%g amax"), ("ulp", "%g ulp")):
        if tol[key]:
            terms.append(fmt % tol[key])
    return " + ".join(terms) or "exact"


# Significand bits after the point and least normal exponent (kv_type).
FORMATS = {"bf16": (7, -126), "f16": (10, -14), "f32": (23, -126)}


def ulp(torch, ref, fmt):
    """kv_ulp of every element of ref (a float64 tensor) in type fmt."""
    mant, emin = FORMATS[fmt]
    a = ref.abs()
    _, e = torch.frexp(a)  # a = f 2^e, f in [0.5, 1)
    e = torch.where(a != 0, e - 1, torch.full_like(e, emin))
    e = torch.clamp(e, min=emin)
    return torch.exp2((e - mant).double())


def abs_error(torch, got, ref):
    """|got - ref| in float64, infinite where got is NaN or infinite and ref
    is not the same, 0 where both are the same NaN or infinity."""
    g, r = got.double(), ref.double()
    err = (g - r).abs()
    same_special = (torch.isnan(g) & torch.isnan(r)) | (torch.isinf(g) & (g == r))
    bad = ~torch.isfinite(g) | ~torch.isfinite(r)
    err = torch.where(bad, torch.full_like(err, math.inf), err)
    return torch.where(same_special, torch.zeros_like(err), err)


def fraction_elementwise(torch, got, ref, tol, fmt):
    """The worst element's error over its tolerance (kv_elem's key)."""
    r = ref.double()
    err = abs_error(torch, got, ref)
    finite = r[torch.isfinite(r)]
    amax = finite.abs().max().item() if finite.numel() else 0.0
    bound = tol["atol"] + tol["rtol"] * r.abs() + tol["rtol_amax"] * amax
    if tol["ulp"] > 0:
        bound = bound + tol["ulp"] * ulp(torch, torch.nan_to_num(r), fmt)
    key = torch.where(err == 0, torch.zeros_like(err),
                      torch.where(bound > 0, err / bound, torch.full_like(err, math.inf)))
    return key.max().item(), {}


def fraction_baseline(torch, got, ref, base, tol):
    """The larger of the max and the mean criterion of the baseline rule,
    and both, with the baseline's errors."""
    err = abs_error(torch, got, ref)
    e_base = abs_error(torch, base, ref)
    bmax, bmean = e_base.max().item(), e_base.mean().item()
    fmax = err.max().item() / (tol["factor"] * bmax + tol["atol"])
    fmean = err.mean().item() / (tol["factor"] * bmean + tol["atol"])
    return max(fmax, fmean), {"max": fmax, "mean": fmean,
                              "base_max": bmax, "base_mean": bmean}


# ---- attention_bf16 ------------------------------------------------------------


def attention_inputs(torch, d, gen):
    b, h, hk, s, hd = d["batch"], d["heads"], d["kv_heads"], d["seq"], d["head_dim"]
    q = torch.randn(b, h, s, hd, device="cuda", generator=gen).bfloat16()
    k = torch.randn(b, hk, s, hd, device="cuda", generator=gen).bfloat16()
    v = torch.randn(b, hk, s, hd, device="cuda", generator=gen).bfloat16()
    return q, k, v, d["mask"] == 2


def expand_kv(k, v, heads):
    """K and V repeated to every query head (head h reads h / group)."""
    group = heads // k.shape[1]
    if group == 1:
        return k, v
    return k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)


def causal_mask(torch, s, shift=0):
    """True where query i sees key j: j <= i + shift."""
    i = torch.arange(s, device="cuda").unsqueeze(1)
    j = torch.arange(s, device="cuda").unsqueeze(0)
    return j <= i + shift


def attention_reference(torch, q, k, v, causal):
    """attention_bf16_ref.cu's result: fp32 in the kernel, fp64 here, O
    rounded once to bf16. One batch at a time."""
    k, v = expand_kv(k, v, q.shape[1])
    s, hd = q.shape[2], q.shape[3]
    out = torch.empty_like(q)
    mask = causal_mask(torch, s) if causal else None
    for bi in range(q.shape[0]):
        sc = q[bi].double() @ k[bi].double().transpose(-1, -2) / math.sqrt(hd)
        if mask is not None:
            sc = sc.masked_fill(~mask, -math.inf)
        p = torch.softmax(sc, dim=-1)
        out[bi] = (p @ v[bi].double()).bfloat16()
    return out


def attention_baseline(torch, q, k, v, causal):
    """attention_bf16_base.cu's result: q . k in fp32, scaled, rounded to
    bf16; softmax in fp32; probabilities rounded to bf16; P V in fp32
    (fp64 here); O rounded to bf16."""
    k, v = expand_kv(k, v, q.shape[1])
    s, hd = q.shape[2], q.shape[3]
    scale = torch.tensor(1.0 / math.sqrt(hd), dtype=torch.float32)
    out = torch.empty_like(q)
    mask = causal_mask(torch, s) if causal else None
    for bi in range(q.shape[0]):
        dots = (q[bi].double() @ k[bi].double().transpose(-1, -2)).float()
        sc = (dots * scale.item()).bfloat16().float()
        if mask is not None:
            sc = sc.masked_fill(~mask, -math.inf)
        p = torch.softmax(sc, dim=-1).bfloat16()
        out[bi] = (p.double() @ v[bi].double()).bfloat16()
    return out


def sdpa_backends(torch, F, q, k, v, causal):
    """(label, O) for each SDPA backend that runs here."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    names = [("flash", "FLASH_ATTENTION"), ("cuDNN", "CUDNN_ATTENTION"),
             ("mem-efficient", "EFFICIENT_ATTENTION")]
    gqa = k.shape[1] != q.shape[1]
    for label, attr in names:
        backend = getattr(SDPBackend, attr, None)
        if backend is None:
            print("  sdpa %s: not in this PyTorch" % label)
            continue
        tries = [(k, v, {"enable_gqa": True} if gqa else {}, "")]
        if gqa:
            kr, vr = expand_kv(k, v, q.shape[1])
            tries.append((kr, vr, {}, ", K and V repeated"))
        why = None
        for kk, vv, extra, note in tries:
            try:
                with sdpa_kernel(backend):
                    o = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, **extra)
                torch.cuda.synchronize()
                yield "sdpa %s%s" % (label, note), o
                why = None
                break
            except Exception as e:  # this backend does not take these inputs
                why = e
        if why is not None:
            print("  sdpa %s: does not run here: %s" % (label, str(why).split("\n")[0][:120]))


def _probabilities(torch, q, k, causal, shift=0, drop=None):
    """Unnormalised softmax numerators exp(s - max) in fp32 with the row
    sums, for the bad variants (K already expanded). drop: keys to leave
    out."""
    s, hd = q.shape[-2], q.shape[-1]
    sc = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(hd)
    keep = causal_mask(torch, s, shift) if causal or shift else None
    if drop is not None:
        cols = torch.ones(s, dtype=torch.bool, device="cuda")
        cols[drop[0]:drop[1]] = False
        keep = cols.unsqueeze(0) if keep is None else keep & cols.unsqueeze(0)
    if keep is not None:
        sc = sc.masked_fill(~keep, -math.inf)
    p = torch.exp(sc - sc.amax(dim=-1, keepdim=True))
    return sc, p


def bad_attention(torch, q, k, v, causal):
    """(label, O) of each known-bad variant, one batch at a time."""
    k, v = expand_kv(k, v, q.shape[1])
    nb, s = q.shape[0], q.shape[2]

    def per_batch(fn):
        return torch.stack([fn(q[bi], k[bi], v[bi]) for bi in range(nb)])

    def flash_like(p, vb):
        """P rounded to bf16 for P V; the sum from the fp32 values."""
        return ((p.bfloat16().float() @ vb.float()) / p.sum(-1, keepdim=True)).bfloat16()

    def pv_bf16(qb, kb, vb):
        _, p = _probabilities(torch, qb, kb, causal)
        pb = p.bfloat16().float()
        acc = torch.zeros(qb.shape, dtype=torch.bfloat16, device="cuda")
        for j in range(s):
            acc = (acc.float() + pb[..., j:j + 1] * vb[:, j:j + 1, :].float()).bfloat16()
        return (acc.float() / p.sum(-1, keepdim=True)).bfloat16()

    def drop_tile(qb, kb, vb):
        _, p = _probabilities(torch, qb, kb, causal, drop=(64, 128))
        return flash_like(p, vb)

    def off_by_one(qb, kb, vb):
        _, p = _probabilities(torch, qb, kb, causal, shift=1 if causal else 0)
        return flash_like(p, vb)

    def fp16_softmax(qb, kb, vb):
        sc, _ = _probabilities(torch, qb, kb, causal)
        e = torch.exp(sc.half())  # no maximum subtracted; 0 where masked
        l = torch.zeros(qb.shape[:-1] + (1,), dtype=torch.half, device="cuda")
        acc = torch.zeros(qb.shape, dtype=torch.half, device="cuda")
        for j in range(s):
            ej = e[..., j:j + 1]
            l = (l.float() + ej.float()).half()
            acc = (acc.float() + ej.float() * vb[:, j:j + 1, :].half().float()).half()
        return (acc.float() / l.float()).bfloat16()

    yield "P V accumulated in bf16, key by key", per_batch(pv_bf16)
    yield "keys 64 to 127 dropped (a skipped tile)", per_batch(drop_tile)
    yield "causal mask off by one (query i sees i + 1)", per_batch(off_by_one)
    yield "fp16 softmax without its maximum (overflows above 11)", per_batch(fp16_softmax)


def run_attention(torch, F, task, dims, gen):
    q, k, v, causal = attention_inputs(torch, dims, gen)
    ref = attention_reference(torch, q, k, v, causal)
    base = attention_baseline(torch, q, k, v, causal)
    tol = output_tolerance(task, "O")
    frac = ((lambda got: fraction_baseline(torch, got, ref, base, tol)) if tol["factor"] > 0
            else (lambda got: fraction_elementwise(torch, got, ref, tol, "bf16")))
    yield "info", "baseline (attention_bf16_base.cu)", frac(base)
    for label, o in sdpa_backends(torch, F, q, k, v, causal):
        yield "industry", label, frac(o)
    for label, o in bad_attention(torch, q, k, v, causal):
        yield "bad", label, frac(o)


# ---- gemm_bf16, gemv_w4a16, rmsnorm_bf16 --------------------------------------------


def run_gemm(torch, F, task, dims, gen):
    m, n, kk = dims["m"], dims["n"], dims["k"]
    a = torch.randn(m, kk, device="cuda", generator=gen).bfloat16()
    b = torch.randn(kk, n, device="cuda", generator=gen).bfloat16()
    ref = (a.double() @ b.double()).bfloat16()
    tol = output_tolerance(task, "C")
    # cuBLAS as the task asks for it: fp32 accumulation throughout, split-k
    # partials reduced in fp32 (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION).
    # PyTorch allows bf16 split-k reductions by default, which at some
    # shapes is the very shortcut the task rejects: shown for information.
    flags = torch.backends.cuda.matmul
    saved = flags.allow_bf16_reduced_precision_reduction
    try:
        flags.allow_bf16_reduced_precision_reduction = False
        exact = torch.matmul(a, b)
        flags.allow_bf16_reduced_precision_reduction = True
        reduced = torch.matmul(a, b)
    finally:
        flags.allow_bf16_reduced_precision_reduction = saved
    yield "industry", "torch.matmul (cuBLAS, fp32 split-k reduction)", fraction_elementwise(
        torch, exact, ref, tol, "bf16")
    yield "information", "torch.matmul, bf16 split-k reduction (torch default)", \
        fraction_elementwise(torch, reduced, ref, tol, "bf16")
    # A known shortcut: two halves of k, each rounded to bf16, then added.
    h = kk // 2
    split = ((a[:, :h] @ b[:h]).float() + (a[:, h:] @ b[h:]).float()).bfloat16()
    yield "bad", "split-k partials rounded to bf16", fraction_elementwise(
        torch, split, ref, tol, "bf16")


def run_gemv(torch, F, task, dims, gen, tt):
    batch, n, k = dims["batch"], dims["n"], dims["k"]
    kb, groups = (k + 1) // 2, (k + 127) // 128
    qb = torch.randint(0, 256, (n, kb), device="cuda", dtype=torch.uint8, generator=gen)
    scales = (0.002 + 0.008 * torch.rand(n, groups, device="cuda", generator=gen)).half()
    zeros = torch.randint(4, 12, (n, groups), device="cuda", dtype=torch.uint8, generator=gen)
    x = torch.randn(batch, k, device="cuda", generator=gen).half()
    # The exact weights: (q - zero) * scale, a small integer times an fp16.
    q = torch.stack((qb & 15, qb >> 4), dim=-1).reshape(n, -1)[:, :k].double()
    g = torch.arange(k, device="cuda") // 128
    w = (q - zeros.double()[:, g]) * scales.double()[:, g]
    ref = (x.double() @ w.t()).half()
    tol = output_tolerance(task, "y")
    got = torch.mm(x, tt._unpack_w4(torch, qb, scales, zeros, k).t())
    yield "industry", "dequantise to fp16 + torch.mm", fraction_elementwise(
        torch, got, ref, tol, "f16")
    fused = tt.tinygemm(torch, qb, scales, zeros, x, n, k)
    if fused:
        yield "info", "tinygemm (bf16 x and y)", fraction_elementwise(
            torch, fused().half(), ref, tol, "f16")
    acc = torch.zeros(batch, n, dtype=torch.half, device="cuda")
    wh = tt._unpack_w4(torch, qb, scales, zeros, k).float()
    for c0 in range(0, k, 64):  # fp16 partial sums of 64 products
        acc = (acc.float() + x[:, c0:c0 + 64].float() @ wh[:, c0:c0 + 64].t()).half()
    yield "bad", "fp16 accumulation (every 64 products)", fraction_elementwise(
        torch, acc, ref, tol, "f16")


def run_rmsnorm(torch, F, task, dims, gen):
    rows, hidden, eps = dims["rows"], dims["hidden"], 1e-5
    x = torch.randn(rows, hidden, device="cuda", generator=gen).bfloat16()
    r = torch.randn(rows, hidden, device="cuda", generator=gen).bfloat16()
    w = (0.5 + torch.rand(hidden, device="cuda", generator=gen)).bfloat16()
    h = (x.float() + r.float()).bfloat16()
    hd = h.double()
    ref = (hd / torch.sqrt((hd * hd).mean(-1, keepdim=True) + eps) * w.double()).bfloat16()
    tol = output_tolerance(task, "y")
    hf = h.float()
    eager = (hf * torch.rsqrt(hf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).bfloat16()
    yield "industry", "eager (fp32, one rounding)", fraction_elementwise(
        torch, eager, ref, tol, "bf16")
    if hasattr(F, "rms_norm"):
        yield "industry", "F.rms_norm", fraction_elementwise(
            torch, F.rms_norm(h, (hidden,), w, eps), ref, tol, "bf16")
    xd = x.double()
    wrong = (hd / torch.sqrt((xd * xd).mean(-1, keepdim=True) + eps) * w.double()).bfloat16()
    yield "bad", "the norm of x instead of x + residual", fraction_elementwise(
        torch, wrong, ref, tol, "bf16")


# ---- the run --------------------------------------------------------------------------


def shapes_of(task):
    return ([("train", i, d) for i, d in enumerate(task["shapes"])] +
            [("held_out", i, d) for i, d in enumerate(task.get("held_out", []))])


def load_tasks(directory, only):
    tasks = {}
    for name in only or TASKS:
        with open(os.path.join(directory, name + ".json")) as f:
            tasks[name] = json.load(f)
    return tasks


def plan(tasks):
    """What a run would do, without a GPU."""
    outputs = {"attention_bf16": "O", "gemm_bf16": "C", "gemv_w4a16": "y",
               "rmsnorm_bf16": "y"}
    for name, task in tasks.items():
        tol = output_tolerance(task, outputs[name])
        print("%s: output %s, tolerance %s" % (name, outputs[name], tolerance_text(tol)))
        for set_name, i, d in shapes_of(task):
            print("  %-8s %d  %s" % (set_name, i, ", ".join("%s=%d" % kv for kv in d.items())))
    return 0


def fraction_text(f):
    if math.isinf(f):
        return "inf"
    if math.isnan(f):
        return "nan"
    return "%.3f" % f if f < 100 else "%.3g" % f


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", help="the task directory (examples/tasks)")
    ap.add_argument("--only", choices=TASKS, action="append")
    ap.add_argument("--seed", type=int, default=1, help="the inputs' seed")
    ap.add_argument("--plan", action="store_true",
                    help="print the shapes and tolerances only (no GPU)")
    ap.add_argument("--json", help="also write every row to this file")
    args = ap.parse_args()
    tasks = load_tasks(args.tasks, args.only)
    if args.plan:
        return plan(tasks)

    import torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to measure", file=sys.stderr)
        return 77
    # The references are fp64; nothing may run in TF32.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tt = _torch_tasks()
    runners = {
        "attention_bf16": run_attention,
        "gemm_bf16": run_gemm,
        "gemv_w4a16": lambda torch, F, task, d, gen: run_gemv(torch, F, task, d, gen, tt),
        "rmsnorm_bf16": run_rmsnorm,
    }
    print("%s; PyTorch %s; inputs seed %d; fraction = worst error over the "
          "tolerance (1 = at the tolerance)" % (torch.cuda.get_device_name(0),
                                                torch.__version__, args.seed))
    rows, problems = [], []
    for name, task in tasks.items():
        out = {"attention_bf16": "O", "gemm_bf16": "C", "gemv_w4a16": "y",
               "rmsnorm_bf16": "y"}[name]
        print("\n%s: tolerance %s" % (name, tolerance_text(output_tolerance(task, out))))
        print("  %-8s %-42s %-52s %9s  %s" % ("set", "shape", "kernel", "fraction", "verdict"))
        bad_train = {}  # a bad variant's worst training fraction
        for set_name, i, dims in shapes_of(task):
            gen = torch.Generator(device="cuda")
            gen.manual_seed(args.seed * 1000 + i + (500 if set_name == "held_out" else 0))
            shape = ", ".join("%s=%d" % kv for kv in dims.items())
            for kind, label, (f, detail) in runners[name](torch, F, task, dims, gen):
                if kind == "industry":
                    verdict = "ok" if f <= MARGIN else ("OVER 0.5" if f <= 1 else "FAIL")
                    if f > MARGIN:
                        problems.append("%s %s %s: %s at %s of the tolerance"
                                        % (name, set_name, shape, label, fraction_text(f)))
                elif kind == "bad":
                    verdict = "FAIL" if f > 1 else "passes"
                    if set_name == "train":
                        bad_train[label] = max(bad_train.get(label, 0.0), f)
                else:
                    verdict = "ok" if f <= 1 else "FAIL (information)"
                extra = ""
                if detail:
                    extra = "  (max %s, mean %s; baseline max %.3g, mean %.3g)" % (
                        fraction_text(detail["max"]), fraction_text(detail["mean"]),
                        detail["base_max"], detail["base_mean"])
                print("  %-8s %-42s %-52s %9s  %s%s" % (set_name, shape[:42], label[:52],
                                                       fraction_text(f), verdict, extra))
                rows.append({"task": name, "set": set_name, "index": i, "dims": dims,
                             "kind": kind, "kernel": label, "fraction": f,
                             "verdict": verdict, **detail})
            torch.cuda.empty_cache()
        for label, f in bad_train.items():
            if f <= 1:
                problems.append("%s: the bad variant '%s' passes every training shape "
                                "(worst %s)" % (name, label, fraction_text(f)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                       "seed": args.seed, "rows": rows}, fh, indent=1,
                      default=lambda x: None)
    print()
    if problems:
        for p in problems:
            print("PROBLEM: " + p)
        return 1
    print("every industry kernel is within %.1f of its tolerance, and every bad "
          "variant fails" % MARGIN)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""export-check.py: calls an exported package (kevo export) on the GPU, as a
user would, and compares its outputs with the task's reference computed in
PyTorch (float64, then rounded), under the task's tolerance.

Both targets are called: the C package through its shared library
(libNAME.so, built by its Makefile, loaded with ctypes, on PyTorch's current
stream) and the PyTorch package (NAME/__init__.py, built on first use). The
shapes are the task's first training shape, its held-out shapes and one
shape of neither set; inputs are fresh random draws as the task's "init"
says. The PyTorch package's argument checks are exercised too. Prints TAP;
exits 0 when every check passed.

    python3 export-check.py --task examples/tasks/saxpy.json --pkg DIR --name saxpy
"""
import argparse
import ctypes
import importlib
import json
import sys

import torch

REFERENCES = {
    "saxpy": lambda a, d: {"z": (a["a"] * a["x"].double() + a["y"].double())},
    "softmax": lambda a, d: {"y": torch.softmax(
        a["x"].double().view(d["rows"], d["cols"]), dim=1).reshape(-1)},
    "reduce_sum": lambda a, d: {"out": a["x"].double().sum().reshape(1)},
}

# A shape of neither set, per task: near the held-out ones, never seen.
FRESH = {"saxpy": {"n": 123457}, "softmax": {"rows": 777, "cols": 1531},
         "reduce_sum": {"n": 2000003}}

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i32": torch.int32, "i64": torch.int64}
CTYPES = {"f32": ctypes.c_float, "f64": ctypes.c_double,
          "i32": ctypes.c_int32, "i64": ctypes.c_int64,
          "u32": ctypes.c_uint32, "u64": ctypes.c_uint64}

count = 0
failed = 0


def check(cond, what):
    global count, failed
    count += 1
    if not cond:
        failed += 1
    print(f"{'ok' if cond else 'not ok'} {count} - {what}", flush=True)
    return cond


def evaluate(expr, dims):
    return int(eval(expr, {"__builtins__": {}}, dict(dims)))


def draw(arg, n, gen):
    init = arg.get("init") or {}
    dist = init.get("dist", "normal")
    dtype = DTYPES[arg["type"]]
    if dist == "uniform":
        t = torch.rand(n, generator=gen, dtype=torch.float64, device="cuda")
        t = t * (init.get("hi", 1) - init.get("lo", 0)) + init.get("lo", 0)
    else:
        t = torch.randn(n, generator=gen, dtype=torch.float64, device="cuda")
        t = t * init.get("std", 1) + init.get("mean", 0)
    return t.to(dtype)


def make_args(task, dims, gen):
    """The task's arguments at dims: tensors, drawn scalars; fixed scalars
    left out (the package computes them)."""
    out = {}
    for a in task["args"]:
        if a.get("role") in ("in", "inout"):
            out[a["name"]] = draw(a, evaluate(a["count"], dims), gen)
        elif a.get("role") == "out":
            n = evaluate(a["count"], dims)
            out[a["name"]] = torch.full((n,), float("nan"),
                                        dtype=DTYPES[a["type"]], device="cuda")
        elif "value" not in a:
            out[a["name"]] = float(draw(a, 1, gen).item())
    return out


def compare(task, name, got, want, where):
    tol = task.get("tolerance", {})
    for a in task["args"]:
        if a["name"] != name:
            continue
        tol = a.get("tolerance", tol)
    rtol, atol = tol.get("rtol", 0), tol.get("atol", 0)
    g = got.double()
    bad = ~((g - want).abs() <= atol + rtol * want.abs())
    nbad = int(bad.sum().item())
    if nbad:
        i = int(bad.nonzero()[0].item())
        print(f"# {where}: {nbad} of {g.numel()} elements of '{name}' "
              f"outside the tolerance; element {i}: {g[i].item()!r} "
              f"against {want[i].item()!r}")
    return nbad == 0


def call_c(lib, fname, task, args, dims):
    fn = getattr(lib, fname)
    argtypes, values = [], []
    for a in task["args"]:
        if a.get("role") in ("in", "out", "inout"):
            argtypes.append(ctypes.c_void_p)
            values.append(args[a["name"]].data_ptr())
        elif "value" not in a:
            argtypes.append(CTYPES[a["type"]])
            values.append(args[a["name"]])
    for d in task["dims"]:
        argtypes.append(ctypes.c_int64)
        values.append(dims[d])
    size = ctypes.c_size_t(0)
    ws_fn = getattr(lib, fname + "_workspace_size")
    ws_fn.argtypes = [ctypes.c_int64] * len(task["dims"]) + \
        [ctypes.POINTER(ctypes.c_size_t)]
    ws_fn.restype = ctypes.c_int
    rc = ws_fn(*[dims[d] for d in task["dims"]], ctypes.byref(size))
    if rc != 0:
        return rc
    ws = torch.empty(size.value, dtype=torch.uint8, device="cuda")
    fn.argtypes = argtypes + [ctypes.c_void_p, ctypes.c_size_t,
                              ctypes.c_void_p]
    fn.restype = ctypes.c_int
    rc = fn(*values, ws.data_ptr() if size.value else None, size.value,
            torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    return rc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True)
    ap.add_argument("--pkg", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--no-torch", action="store_true")
    opt = ap.parse_args()
    task = json.load(open(opt.task))
    ref = REFERENCES[task["name"]]
    lib = ctypes.CDLL(f"{opt.pkg}/lib{opt.name}.so")
    getattr(lib, opt.name + "_error").restype = ctypes.c_char_p
    mod = None
    if not opt.no_torch:
        sys.path.insert(0, opt.pkg)
        mod = importlib.import_module(opt.name)
        mod.build(verbose=False)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261122)
    shapes = [("training", task["shapes"][0])]
    shapes += [("held-out", s) for s in task["held_out"]]
    shapes.append(("fresh", FRESH[task["name"]]))
    outs = [a["name"] for a in task["args"] if a.get("role") in ("out", "inout")]
    for kind, dims in shapes:
        where = f"{task['name']} {kind} {dims}"
        args = make_args(task, dims, gen)
        want = ref(args, dims)
        rc = call_c(lib, opt.name, task, args, dims)
        if not check(rc == 0, f"C: {where}: the call returns cudaSuccess"):
            print(f"# error {rc}: {getattr(lib, opt.name + '_error')()}")
        else:
            check(all(compare(task, o, args[o], want[o], where) for o in outs),
                  f"C: {where}: the outputs match the reference")
        if mod is None:
            continue
        args = make_args(task, dims, gen)
        want = ref(args, dims)
        pos = [args[a["name"]] for a in task["args"]
               if a.get("role") or "value" not in a]
        try:
            getattr(mod, opt.name)(*pos, **dims)
            torch.cuda.synchronize()
            ok = True
        except Exception as e:  # noqa: BLE001 - any failure is reported
            print(f"# {type(e).__name__}: {e}")
            ok = False
        if check(ok, f"torch: {where}: the call succeeds"):
            check(all(compare(task, o, args[o], want[o], where) for o in outs),
                  f"torch: {where}: the outputs match the reference")
    if mod is not None:
        dims = task["shapes"][0]
        args = make_args(task, dims, gen)
        fn = getattr(mod, opt.name)
        first = next(a for a in task["args"] if a.get("role") == "in")["name"]

        def expect(exc, change, what):
            bad = dict(args)
            bad[first] = change(bad[first])
            pos = [bad[a["name"]] for a in task["args"]
                   if a.get("role") or "value" not in a]
            try:
                fn(*pos, **dims)
            except exc as e:
                return check(first in str(e), f"torch: {what}: {e}")
            return check(False, f"torch: {what} raises {exc.__name__}")

        expect(TypeError, lambda t: t.double(), "a wrong dtype")
        expect(ValueError, lambda t: t.cpu(), "a tensor on the CPU")
        expect(ValueError, lambda t: torch.cat([t, t])[1:t.numel() + 1],
               "a misaligned tensor")
        expect(ValueError, lambda t: torch.cat([t, t]), "a wrong element count")
        expect(ValueError, lambda t: torch.stack([t, t], 1)[:, 0],
               "a non-contiguous tensor")
    print(f"1..{count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

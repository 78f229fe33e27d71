#!/bin/sh
# hopper.sh: the Hopper kernels of tests/data/hopper against what PyTorch
# runs for the same tasks, measured in one invocation on one GPU.
#
#   gemm_bf16_tma.cu       TMA loads into 128-byte-swizzled shared memory, a
#                          producer warpgroup and two consumer warpgroups,
#                          wgmma, a cluster of two with B multicast
#   attention_bf16_tma.cu  TMA loads of Q, K and V, wgmma for Q K^T and for
#                          P V (P from registers), a producer warpgroup
#
# Each is evaluated by `kevo eval --held-out --json` (correctness at every
# training and held-out shape, the held-out gate, CUPTI kernel times with
# the L2 flushed), and bench/torch-tasks.py times torch.mm (cuBLAS) and
# scaled_dot_product_attention (flash and cuDNN backends) at the same
# shapes. The table gives, per shape, kevo's time, PyTorch's, and
# PyTorch's over kevo's (above 1: the kevo kernel is faster). PyTorch's
# times are CUDA events around a CUDA-graph replay; kevo's are CUPTI's
# kernel records, which leave out the 1 to 3 us that events add around a
# call: at times near 100 us that favours kevo by 1 to 3%.
#
#   bench/hopper.sh [OUT]          (from the build directory)
#
# OUT (default runs/hopper-YYYYmmdd-HHMMSS) receives the JSON of each
# step. KEVO_SRCDIR names the source tree when it is not the script's.
# Exits 1 when a kernel fails a shape or its gate; needs a GPU, python3
# and PyTorch.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
out=${1:-runs/hopper-$(date +%Y%m%d-%H%M%S)}
kevo=./examples/kevo
[ -x "$kevo" ] || { echo "hopper.sh: $kevo not found: run from the build directory after make" >&2; exit 1; }
mkdir -p "$out" || exit 1
status=0
"$kevo" peaks --all --json > "$out/peaks.json" || exit 1
python3 "$srcdir/bench/torch-tasks.py" --peaks "$out/peaks.json" \
  --tasks "$srcdir/examples/tasks" --only gemm_bf16 --only attention_bf16 \
  --held-out --json "$out/torch.json" > "$out/torch.log" 2>&1 || status=1
for k in gemm_bf16 attention_bf16; do
  echo "== $k: kevo eval --held-out tests/data/hopper/${k}_tma.cu"
  "$kevo" eval --held-out "$srcdir/examples/tasks/$k.json" \
    "$srcdir/tests/data/hopper/${k}_tma.cu" | tee "$out/$k.txt"
  "$kevo" eval --held-out --json "$srcdir/examples/tasks/$k.json" \
    "$srcdir/tests/data/hopper/${k}_tma.cu" > "$out/$k.json" || status=1
done
python3 - "$out" <<'PY' || status=1
import json, os, sys

out = sys.argv[1]
torch = json.load(open(os.path.join(out, "torch.json")))
bad = False
for task in ("gemm_bf16", "attention_bf16"):
    ev = json.load(open(os.path.join(out, task + ".json")))
    print("\n%s on %s (gate: %s)" % (task, ev.get("device"),
                                     (ev.get("gate") or {}).get("why")))
    if not (ev.get("gate") or {}).get("passed"):
        bad = True
    for set_name in ("train", "held_out"):
        res = ev.get(set_name) or {}
        for sh in res.get("shapes", []):
            t = sh["time"]["median"] if sh.get("time") else None
            if not sh.get("correct"):
                bad = True
            rows = [r for r in torch["results"] if r["task"] == task
                    and r["set"] == set_name and r["dims"] == sh["dims"]]
            dims = " ".join("%s=%d" % kv for kv in sh["dims"].items())
            line = "  %-8s %-58s %-4s kevo %9.2f us" % (
                set_name, dims, "ok" if sh.get("correct") else "NO",
                (t or 0) * 1e6)
            for r in rows:
                line += " | %s %.2f us, %.3fx" % (r["impl"], r["median_s"] * 1e6,
                                                  r["median_s"] / t if t else 0)
            print(line)
sys.exit(1 if bad else 0)
PY
exit $status

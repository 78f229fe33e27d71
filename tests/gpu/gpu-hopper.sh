#!/bin/sh
# gpu-hopper.sh: the Hopper kernels of tests/data/hopper (TMA tensor maps,
# wgmma, warp-specialised pipelines; the GEMM in a cluster of two with B
# multicast) through `kevo eval --held-out`: correct at every training and
# held-out shape of their task, and through the held-out gate. Their speed
# against cuBLAS and PyTorch's attention is bench/hopper.sh's. Skips (77)
# without a GPU of compute capability 9.0 or later.
#   KEVO_BUILDDIR=BUILD KEVO_SRCDIR=SRC sh tests/gpu/gpu-hopper.sh
b=${KEVO_BUILDDIR:-.}
s=${KEVO_SRCDIR:-.}
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "^GPU" ||
  { echo "1..0 # SKIP no GPU"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 77; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1)
case $cc in
  [0-8].*) echo "1..0 # SKIP compute capability $cc: the kernels need sm_90a"; exit 77 ;;
esac
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
echo "1..2"
n=0
for k in gemm_bf16 attention_bf16; do
  n=$((n + 1))
  "$b/examples/kevo" eval --held-out --json "$s/examples/tasks/$k.json" \
    "$s/tests/data/hopper/${k}_tma.cu" > "$out/$k.json" 2> "$out/$k.err"
  rc=$?
  if msg=$(python3 - "$out/$k.json" <<'PY'
import json, sys
try:
    ev = json.load(open(sys.argv[1]))
except ValueError as e:
    print("no JSON from kevo eval: %s" % e)
    sys.exit(1)
bad = []
shapes = 0
for set_name in ("train", "held_out"):
    for sh in (ev.get(set_name) or {}).get("shapes", []):
        shapes += 1
        if not sh.get("correct"):
            bad.append("%s %s" % (set_name, sh.get("dims")))
gate = ev.get("gate") or {}
kernels = (ev.get("train") or {}).get("kernels", [])
tma = sum((k.get("features") or {}).get("tma", 0) for k in kernels)
print("%d shapes, %d wrong%s; gate %s; %d TMA copies in the PTX" % (
    shapes, len(bad), (": " + "; ".join(bad)) if bad else "",
    "passed" if gate.get("passed") else "FAILED: %s" % gate.get("why"), tma))
sys.exit(0 if shapes >= 2 and not bad and gate.get("passed") and tma > 0 else 1)
PY
  ) && [ $rc -eq 0 ]; then
    echo "ok $n - $k: $msg"
  else
    echo "not ok $n - $k (kevo eval exited $rc): $msg"
    sed 's/^/# /' "$out/$k.err" | tail -n 20
  fi
done

#!/bin/sh
# search-suite.sh: a search of every task of examples/tasks, then one table
# of how far each got, beside what PyTorch reaches on the same GPU.
#
#   bench/search-suite.sh [EVALS] [OUTDIR]     (from the build directory)
#
# EVALS (default 300) is each search's evaluation budget; OUTDIR (default
# runs/suite-YYYYmmdd-HHMMSS) gets one run directory per task. The table
# gives, at the first training shape: the seed's and the champion's
# roofline efficiency, the champion's time, PyTorch's time for the same
# task measured first in the same run (bench/torch-suite.py, when PyTorch
# is installed) and PyTorch's time over the champion's, and PyTorch's
# efficiency on an H100 (the figures below, with the same cost models) with
# the ratio champion / PyTorch; then the champion's fitness (timed again beside
# the other finalists and the seed) against the seed's in the same paired
# timing, the gate verdict, the champion's lowest speed against the seed's
# over the held-out shapes (the gate allows 0.91 with its default slack),
# and for memory-bound tasks whether the champion reaches 0.90 of the
# roofline. Without a champion (no finalist passed the gate) the gate
# column says how many were tried. The last lines flag any champion slower
# than the seed at a held-out shape beyond the slack, or less fit than the
# seed: either is a defect. KEVO_SRCDIR and KEVO_BUILDDIR name the source and build trees
# when they are not the script's tree and the current directory. Needs a
# GPU and python3.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${KEVO_BUILDDIR:-.}
evals=${1:-300}
outdir=${2:-runs/suite-$(date +%Y%m%d-%H%M%S)}
kevo=$builddir/examples/kevo
[ -x "$kevo" ] || { echo "search-suite.sh: $kevo not found: build first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "search-suite.sh: python3 not found" >&2; exit 1; }
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$builddir/operators/.libs}
export KEVO_OPERATOR_PATH
mkdir -p "$outdir" || exit 1

status=0
# PyTorch on the same GPU in the same session, when it is installed.
if python3 -c "import torch" 2>/dev/null; then
  echo "== PyTorch (bench/torch-suite.py)"
  python3 "$srcdir/bench/torch-suite.py" ${KEVO_TORCH_FLAGS:-} \
    --json "$outdir/torch.json" > "$outdir/torch.log" 2>&1 ||
    echo "   torch-suite.py failed: see $outdir/torch.log"
  cat "$outdir/torch.log"
  "$kevo" peaks --all --json > "$outdir/peaks.json" 2>/dev/null
  python3 "$srcdir/bench/torch-tasks.py" --peaks "$outdir/peaks.json" \
    --json "$outdir/torch-half.json" > "$outdir/torch-half.log" 2>&1 ||
    echo "   torch-tasks.py failed: see $outdir/torch-half.log"
  cat "$outdir/torch-half.log"
fi
for task in "$srcdir"/examples/tasks/*.json; do
  name=$(basename "$task" .json)
  echo "== $name ($evals evaluations)"
  start=$(date +%s)
  "$kevo" search --quiet --evals "$evals" "$task" -o "$outdir/$name" \
    > "$outdir/$name.log" 2>&1
  rc=$?
  echo "   exit $rc after $(( $(date +%s) - start )) s (log: $outdir/$name.log)"
  [ $rc -eq 0 ] || tail -n 3 "$outdir/$name.log" | sed 's/^/   | /'
  case $rc in
    0|1) ;;  # 1: no elite passed the gate; the table says so
    3) echo "search-suite.sh: no GPU:" >&2; cat "$outdir/$name.log" >&2; exit 3 ;;
    *) status=1 ;;
  esac
done

python3 - "$outdir" <<'PY' || status=1
import json, os, sys

outdir = sys.argv[1]
# PyTorch's roofline efficiency at each task's first training shape:
# (figure, what was measured).
torch = {
    "saxpy": (0.94, "eager"), "reduce_sum": (0.59, "eager"),
    "transpose": (0.33, "eager"),
    "softmax": (0.88, "torch.compile; eager 0.75"),
    "layernorm": (0.88, "compiled; eager 0.67"),
    "stencil2d": (0.86, "compiled; eager 0.18"),
    "sgemm": (0.90, "cuBLAS, of the FMA peak"),
    "nbody": (0.08, "compiled"), "histogram": (0.05, "eager"),
}

def seed_from_events(path):
    """The seed's efficiency at the first training shape from its "eval"
    event (the first evaluation, without parents), or None."""
    try:
        lines = open(path)
    except OSError:
        return None
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") == "eval" and not ev.get("parents"):
            shapes = ev.get("shapes") or [{}]
            return (shapes[0] or {}).get("efficiency")
    return None

def f(v, fmt="{:.3f}"):
    return "-" if v is None else fmt.format(v)

def retimed(path, ident):
    """The fitness candidate ident got when the finalists were timed again
    together (its "retime" event), or None."""
    try:
        lines = open(path)
    except OSError:
        return None
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("type") == "retime" and ev.get("id") == ident:
            return ev.get("retimed")
    return None

rows, notes, defects, equal = [], [], [], []
# PyTorch measured in this session (torch-suite.py): its best time per task.
measured = {}
for tf in ("torch.json", "torch-half.json"):
    try:
        for r in json.load(open(os.path.join(outdir, tf)))["rows"]:
            best = measured.get(r["task"])
            if best is None or r["time"] < best[0]:
                measured[r["task"]] = (r["time"],
                                       "%s, %s" % (r["code"], r["mode"]))
    except (OSError, ValueError, KeyError):
        pass
for name in sorted(os.listdir(outdir)):
    path = os.path.join(outdir, name, "summary.json")
    if not os.path.isfile(path):
        continue
    s = json.load(open(path))
    shapes = [x for x in s.get("shapes", []) if x.get("set") == "training"]
    sh = shapes[0] if shapes else {}
    seed = (sh.get("seed") or {}).get("efficiency")
    if seed is None:
        seed = seed_from_events(os.path.join(outdir, name, "events.jsonl"))
    ch = sh.get("champion") or {}
    champ = s.get("champion") or {}
    gate = champ.get("gate") or {}
    tried = s.get("gate_tried") or []
    if champ:
        verdict = "passed" if gate.get("passed") else "failed"
    else:
        verdict = "none of %d" % len(tried)
    events = os.path.join(outdir, name, "events.jsonl")
    seed_fit = retimed(events, 1)  # the seed is candidate 1
    champ_fit = champ.get("fitness")
    speeds = [x.get("speed") for x in gate.get("shapes", [])
              if x.get("speed") is not None]
    worst = min(speeds) if speeds else None
    slack = gate.get("slack") or 0.1
    for x in gate.get("shapes", []) if champ else []:
        if x.get("speed") is None or x["speed"] >= 1 / (1 + slack):
            continue
        line = "%s: champion at %.2fx of the %s at held-out %s (%s)" % (
            name, x["speed"], x.get("baseline"), x.get("dims"), x.get("call"))
        # Below the slack but equal within the timing precision or below
        # the launch-latency floor is what the gate allows; slower is not.
        (defects if not x.get("passed") else equal).append(line)
    # The seed is candidate 1; summary.json rounds to 6 digits.
    if champ and champ.get("id") != 1 and seed_fit is not None \
            and champ_fit is not None and champ_fit < seed_fit * (1 - 1e-5):
        defects.append("%s: champion fitness %.3f below the seed's %.3f"
                       % (name, champ_fit, seed_fit))
    t = torch.get(s.get("task", name))
    ratio = (ch.get("efficiency") / t[0]
             if t and ch.get("efficiency") is not None else None)
    m = measured.get(s.get("task", name))
    torch_us = m[0] * 1e6 if m else None
    speedup = (m[0] / ch["time"] if m and ch.get("time") else None)
    if m:
        notes.append("%s: PyTorch measured %s" % (s.get("task", name), m[1]))
    mem = "-"
    if sh.get("bound") == "memory":
        mem = ("yes" if (ch.get("efficiency") or 0) >= 0.90 else "no")
    rows.append([s.get("task", name), f(seed), f(ch.get("efficiency")),
                 f(champ.get("fitness")), f(seed_fit), verdict,
                 f(worst, "{:.2f}"),
                 f(None if ch.get("time") is None else ch["time"] * 1e6,
                   "{:.1f}"),
                 f(torch_us, "{:.1f}"), f(speedup, "{:.2f}"),
                 f(t[0] if t else None, "{:.2f}"), f(ratio, "{:.2f}"), mem])
    if t and not m:
        notes.append("%s: PyTorch on an H100 %s" % (s.get("task", name), t[1]))

cols = ["task", "seed eff", "champ eff", "champ fitness", "seed fitness",
        "gate", "held-out vs seed", "champ us", "torch us", "torch/champ",
        "H100 torch eff", "champ/torch eff", "mem >= 0.90"]
w = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
     for i, c in enumerate(cols)]
print()
print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)))
print("  ".join("-" * x for x in w))
for r in rows:
    print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)))
print("\nefficiency and time at the first training shape; fitness timed "
      "again beside the seed; held-out vs seed: the champion's lowest speed "
      "against its baseline over the held-out shapes; " + "; ".join(notes))
for d in equal:
    print("equal (allowed): " + d)
for d in defects:
    print("DEFECT: " + d)
if rows and not defects:
    print("no champion slower than its seed at a held-out shape beyond the "
          "slack, and none less fit than the seed")
if not rows:
    print("no summary.json under " + outdir, file=sys.stderr)
    sys.exit(1)
PY
exit $status

#!/bin/sh
# scale-out.sh: one search on one GPU, on every GPU of the machine
# (--devices all) and over MPI ranks (mpirun -np N, one GPU a rank), with
# the same task, seed and evaluation budget, and what each reached.
#
#   bench/scale-out.sh [TASK.json] [EVALS] [OUTDIR] [RANKS]   (from the build directory)
#
# TASK defaults to examples/tasks/sgemm.json, EVALS to 200, OUTDIR to
# runs/scale-YYYYmmdd-HHMMSS, RANKS to the number of GPUs. For each run it
# prints the evaluations per second of the search phase (from the eval
# events' times: the children after the seed over the time between the
# seed's judgement and the last child's, so that the start, with its
# ceilings, and the final gate and tuning are left out), the same over the
# whole process as summary.json has it, the champion's fitness as judged
# and as timed again beside the other finalists, the gate verdict, and how
# many evaluations each device or rank made; then the ratios against the
# run on one GPU. The MPI run is left out where kevo was built without MPI
# or there is no mpirun. Needs python3 and a GPU.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${KEVO_BUILDDIR:-.}
task=${1:-$srcdir/examples/tasks/sgemm.json}
evals=${2:-200}
outdir=${3:-runs/scale-$(date +%Y%m%d-%H%M%S)}
kevo=$builddir/examples/kevo
[ -x "$kevo" ] || { echo "scale-out.sh: $kevo not found: build first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "scale-out.sh: python3 not found" >&2; exit 1; }
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
ranks=${4:-$gpus}
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$builddir/operators/.libs}
export KEVO_OPERATOR_PATH
mkdir -p "$outdir" || exit 1
echo "== $gpus GPUs: $(nvidia-smi -L 2>/dev/null | head -n 1)"

run() { # NAME COMMAND...
  name=$1
  shift
  echo "== $name: $*"
  start=$(date +%s.%N)
  "$@" --evals "$evals" --seed 1 --quiet -o "$outdir/$name" "$task" \
    > "$outdir/$name.out" 2> "$outdir/$name.err"
  echo "   exit $?, $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
  tail -n 3 "$outdir/$name.err" | sed 's/^/   /'
}

run one "$kevo" search --devices 0
[ "$gpus" -gt 1 ] && run all "$kevo" search --devices all
mpirun=$(command -v mpirun)
if [ -n "$mpirun" ] && grep -q '^#define KEVO_WITH_MPI 1' "$builddir/config.h" 2>/dev/null &&
   [ "$ranks" -gt 1 ]; then
  flags=""
  "$mpirun" --version 2>/dev/null | grep -q "Open MPI" &&
    { flags="--oversubscribe --bind-to none"; [ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"; }
  run mpi "$mpirun" $flags -np "$ranks" "$kevo" search
fi

python3 - "$outdir" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for name in ("one", "all", "mpi"):
    d = os.path.join(out, name)
    if not os.path.isdir(d):
        continue
    evs = []
    with open(os.path.join(d, "events.jsonl")) as f:
        for line in f:
            try:
                evs.append(json.loads(line))
            except ValueError:
                pass
    evals = [e for e in evs if e.get("type") == "eval"]
    rate = float("nan")
    if len(evals) > 2:
        t0, t1 = evals[0]["time"], evals[-1]["time"]
        rate = (len(evals) - 1) / (t1 - t0) if t1 > t0 else float("nan")
    try:
        s = json.load(open(os.path.join(d, "summary.json")))
    except (OSError, ValueError):
        s = {}
    ch = s.get("champion") or {}
    gate = (ch.get("gate") or {}).get("passed")
    where = {}
    for e in evals:
        k = e.get("device") or "?"
        where[k] = where.get(k, 0) + 1
    rows.append((name, len(evals), rate, s.get("evals_per_second"),
                 ch.get("fitness"), ch.get("retimed_fitness"), gate, where))
print()
print("%-4s %6s %14s %14s %9s %9s %6s  %s" % ("run", "evals", "evals/s search",
      "evals/s total", "champion", "retimed", "gate", "evaluations by device"))
for r in rows:
    f = lambda x: "%.3f" % x if isinstance(x, (int, float)) and x == x else "-"
    print("%-4s %6d %14s %14s %9s %9s %6s  %s" % (r[0], r[1], f(r[2]), f(r[3]),
          f(r[4]), f(r[5]), {True: "passed", False: "failed"}.get(r[6], "-"),
          ", ".join("%s: %d" % kv for kv in sorted(r[7].items()))))
base = rows[0] if rows and rows[0][0] == "one" else None
for r in rows[1:]:
    if base and base[2] == base[2] and base[2] > 0:
        print("%s / one: %.2fx evaluations per second in the search phase, "
              "%.2fx over the whole process" % (r[0], r[2] / base[2],
              (r[3] or 0) / base[3] if base[3] else float("nan")))
PY

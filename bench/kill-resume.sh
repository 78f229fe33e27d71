#!/bin/sh
# kill-resume.sh: a search killed with SIGKILL and resumed loses nothing
# its last checkpoint held.
#
#   bench/kill-resume.sh [TASK.json] [OUT]     (from the build directory)
#
# Starts `kevo search --evals 400 --set checkpoint_every=20 TASK -o OUT`
# (TASK defaults to examples/tasks/sgemm.json, whose parameter space is
# large enough for 400 evaluations and whose evaluations are slow enough
# that the kill lands in the middle of the work; OUT defaults to a new
# temporary directory), waits until OUT/checkpoint.json counts 60 evaluations or
# more, kills the search with SIGKILL, keeps a copy of that checkpoint,
# resumes with `kevo search --resume OUT --evals 200`, and then checks that
# every elite of the saved checkpoint is in the final archive
# (summary.json), or was replaced there by a fitter elite in its cell, and
# that the resumed run counted on from the checkpoint. Prints the figures;
# exits 0 when every check holds, 1 otherwise, 3 without a GPU. Needs
# python3.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${KEVO_BUILDDIR:-.}
task=${1:-$srcdir/examples/tasks/sgemm.json}
out=${2:-$(mktemp -d)/run}
kevo=$builddir/examples/kevo
[ -x "$kevo" ] || { echo "kill-resume.sh: $kevo not found: build first" >&2; exit 1; }
command -v python3 >/dev/null || { echo "kill-resume.sh: python3 not found" >&2; exit 1; }
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$builddir/operators/.libs}
export KEVO_OPERATOR_PATH

# The checkpoint's count of evaluations (-1 when there is none yet).
count() {
  python3 - "$1" <<'PY'
import json, sys
try:
    ck = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print(-1); sys.exit(0)
v = (ck.get("counters") or {}).get("evaluations", -1)
print(v if isinstance(v, int) else -1)
PY
}

mkdir -p "$(dirname "$out")" || exit 1
echo "run: $out"
"$kevo" search --quiet --evals 400 --set checkpoint_every=20 "$task" -o "$out" \
  > "$out.first.log" 2>&1 &
pid=$!
start=$(date +%s)
n=-1
while [ "$n" -lt 60 ]; do
  if ! kill -0 $pid 2>/dev/null; then
    wait $pid; rc=$?
    echo "kill-resume.sh: the search ended by itself (exit $rc) before a checkpoint of 60:" >&2
    cat "$out.first.log" >&2
    [ $rc -eq 3 ] && exit 3
    exit 1
  fi
  if [ $(( $(date +%s) - start )) -gt 600 ]; then
    kill -9 $pid; echo "kill-resume.sh: no checkpoint of 60 evaluations in 600 s" >&2; exit 1
  fi
  sleep 0.2
  n=$(count "$out/checkpoint.json")
done
if ! kill -9 $pid 2>/dev/null; then
  echo "kill-resume.sh: the search ended by itself before it could be killed" >&2
  exit 1
fi
wait $pid 2>/dev/null
killed_after=$(( $(date +%s) - start ))
cp "$out/checkpoint.json" "$out.killed-checkpoint.json" || exit 1
saved=$(count "$out.killed-checkpoint.json")
events=$(grep -c '"type": *"eval"' "$out/events.jsonl")
echo "killed after $killed_after s: checkpoint at $saved evaluations, $events evaluations logged"

start=$(date +%s)
"$kevo" search --quiet --resume "$out" --evals 200 > "$out.resume.log" 2>&1
rc=$?
echo "resumed run: exit $rc after $(( $(date +%s) - start )) s (log: $out.resume.log)"
[ -f "$out/summary.json" ] || { cat "$out.resume.log" >&2; exit 1; }

python3 - "$out.killed-checkpoint.json" "$out/summary.json" "$out/events.jsonl" <<'PY'
import json, sys

ck = json.load(open(sys.argv[1]))
summary = json.load(open(sys.argv[2]))
saved = ck["counters"]["evaluations"]

# The checkpoint's "islands": one archive (kevo_archive_to_json) each.
before = [(i, e["cell"], e["candidate"]["id"], e["fitness"])
          for i, a in enumerate(ck["islands"]) for e in a.get("elites", [])]
after = {(e["island"], e["cell"]): e
         for e in summary["archive"]["elites"]}

kept = replaced = lost = 0
for island, cell, cid, fit in before:
    e = after.get((island, cell))
    if e and e["id"] == cid:
        kept += 1
    elif e and e["fitness"] >= fit:
        replaced += 1
    else:
        lost += 1
        print("LOST: elite %d (island %d, cell %d, fitness %.4f)"
              % (cid, island, cell, fit))

# Evaluations after the resume count on from the checkpoint.
ns, resumed = [], False
for line in open(sys.argv[3]):
    try:
        ev = json.loads(line)
    except ValueError:
        continue  # the line the kill cut short
    if ev.get("type") == "start" and ev.get("resumed"):
        resumed, ns = True, []
        start_count = ev.get("evaluations")
    elif resumed and ev.get("type") == "eval":
        ns.append(ev["n"])
ok_counts = resumed and start_count == saved and ns and ns[0] == saved + 1 \
    and ns == list(range(saved + 1, saved + 1 + len(ns)))

print("checkpoint: %d evaluations, %d elites" % (saved, len(before)))
print("final: %d evaluations, %d elites, state %s (%s)" % (
    summary["evaluations"], len(after), summary["state"],
    summary.get("stop_reason")))
print("elites of the checkpoint: %d kept, %d replaced by fitter ones, %d lost"
      % (kept, replaced, lost))
print("evaluations after resuming: %s, n %s..%s" % (
    len(ns), ns[0] if ns else "-", ns[-1] if ns else "-"))
print("verdict: %s" % ("every elite kept or beaten, counts continue"
                       if lost == 0 and ok_counts else "FAILED"))
sys.exit(0 if lost == 0 and ok_counts else 1)
PY

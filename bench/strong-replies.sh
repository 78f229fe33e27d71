#!/bin/sh
# strong-replies.sh: serves the strong-reply corpus to llm searches on the
# GPU. For each task directory under tests/data/strong-replies (replies
# written as a strong model writes them to kevo's own prompts: whole
# kernels with cp.async pipelines, mma.sync, flash-style attention, some
# of them subtly wrong), the loopback server answers every request with
# the next reply, in the order of the file names, and
#   kevo search --no-params --llm CONFIG --set repair_turns=0
#               --evals (replies + 1) examples/tasks/TASK.json
# runs into OUT/TASK (the task file is tests/data/hopper/TASK.json where
# examples/tasks has none: gemm_bf16_tma, gemm_bf16 with the Hopper kernel
# of tests/data/hopper as its seed, so the replies' parent is that kernel). Then it prints, per task, what became of each reply
# (verdict, fitness, gate), the champion, the fittest child that passed
# the gate, and whether RUN/llm holds a request and a reply file for
# every model call; and it copies the first prompt kevo built into
# OUT/TASK/prompt.txt. Exits 1 when a champion is not the fittest gated
# candidate or an exchange is missing from RUN/llm.
#
#   bench/strong-replies.sh [OUT] [TASK...]     (from the build directory)
#
# OUT defaults to runs/strong-replies-YYYYmmdd-HHMMSS; without TASKs every
# directory of the corpus is served. KEVO_SRCDIR and KEVO_BUILDDIR name the
# source and build trees when they are not the script's tree and the
# current directory. Needs a GPU and python3.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${KEVO_BUILDDIR:-.}
out=${1:-runs/strong-replies-$(date +%Y%m%d-%H%M%S)}
[ $# -gt 0 ] && shift
corpus=$srcdir/tests/data/strong-replies
kevo=$builddir/examples/kevo
serve=$builddir/tests/loopback-serve
for p in "$kevo" "$serve"; do
  [ -x "$p" ] || { echo "strong-replies.sh: $p not found: run make check first" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "strong-replies.sh: python3 not found" >&2; exit 1; }
tasks=$*
[ -n "$tasks" ] || tasks=$(ls "$corpus")
mkdir -p "$out" || exit 1
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$builddir/operators/.libs}
export KEVO_OPERATOR_PATH

status=0
for task in $tasks; do
  dir=$corpus/$task
  [ -d "$dir" ] || { echo "strong-replies.sh: no corpus for $task" >&2; status=1; continue; }
  n=$(ls "$dir" | grep -c '\.\(md\|cu\)$')
  tmp=$(mktemp -d) || exit 1
  "$serve" "$dir" > "$tmp/url" 2> "$tmp/server.log" &
  server=$!
  i=0
  while [ ! -s "$tmp/url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 "$tmp/url")
  cat > "$tmp/llm.json" <<JSON
{"models": [{"api": "openai", "model": "loopback", "base_url": "$url/v1",
             "timeout_s": 120}],
 "concurrency": 1, "reply_format": "whole"}
JSON
  taskfile=$srcdir/examples/tasks/$task.json
  [ -f "$taskfile" ] || taskfile=$srcdir/tests/data/hopper/$task.json
  echo "== $task: $n replies from $dir"
  # A corpus may ask for search options of its own (one line, such as
  # "--set repair_turns=1" when a reply answers a repair turn).
  extra=
  [ -f "$dir/search-options" ] && extra=$(head -n 1 "$dir/search-options")
  "$kevo" search --no-params --llm "$tmp/llm.json" --set repair_turns=0 \
    $extra --evals $((n + 1)) "$taskfile" -o "$out/$task" \
    > "$out/$task.log" 2>&1
  rc=$?
  kill $server 2>/dev/null
  wait $server 2>/dev/null
  rm -rf "$tmp"
  tail -n 25 "$out/$task.log"
  echo "(kevo search exited $rc)"
  python3 - "$out/$task" "$taskfile" <<'PY' || status=1
import glob, json, os, re, sys

run = sys.argv[1]
events = []
for line in open(os.path.join(run, "events.jsonl")):
    try:
        events.append(json.loads(line))
    except ValueError:
        pass
s = json.load(open(os.path.join(run, "summary.json")))

gates = {}
for e in events:
    if e.get("type") == "gate":
        gates[e["id"]] = e
print("\n%-4s %-10s %-8s %-9s %-8s %s" % ("id", "operator", "verdict", "fitness", "gate", "reason"))
for e in events:
    if e.get("type") != "eval":
        continue
    g = gates.get(e["id"])
    gate = "-" if not g else ("passed" if g.get("passed") else "failed")
    reason = (e.get("reason") or (g or {}).get("reason") or "")[:110]
    print("%-4s %-10s %-8s %-9.4f %-8s %s" % (e["id"], e.get("operator"), e.get("verdict"),
                                             e.get("fitness") or 0, gate, reason))
# The final pick times the finalists again, together: a finalist's
# figure is its re-timed fitness ("retime" events) where it has one.
retimed = {e["id"]: e["retimed"] for e in events
           if e.get("type") == "retime" and e.get("retimed") is not None}
for g in gates.values():
    if g["id"] in retimed:
        g["fitness"] = retimed[g["id"]]
champ = s.get("champion") or {}
passed = [g for g in gates.values() if g.get("passed")]
best = max(passed, key=lambda g: (g.get("fitness") or 0, -g["id"])) if passed else None
print("\nchampion: %s, fitness %s; fittest gated: %s (fitness %s); stop: %s" % (
    champ.get("id"), champ.get("fitness"), best and best["id"],
    best and best.get("fitness"), s.get("stop_reason")))
failed_after = [g for g in gates.values() if not g.get("passed") and best and
                (g.get("fitness") or 0) > (best.get("fitness") or 0)]
if failed_after:
    print("fitter children that failed the gate: %s" % ", ".join(
        "%d (%.4f)" % (g["id"], g.get("fitness") or 0) for g in failed_after))
ok = best is None or champ.get("id") == best["id"]
print("the champion is the fittest gated candidate: %s" % ("yes" if ok else "NO"))

llm = os.path.join(run, "llm")
files = sorted(os.listdir(llm)) if os.path.isdir(llm) else []
req = [f for f in files if "request" in f]
rep = [f for f in files if "reply" in f]
calls = sum(o.get("requests", 0) for o in s.get("operators", []))
print("RUN/llm: %d files, %d requests, %d replies; the operators made %d requests" % (
    len(files), len(req), len(rep), calls))
logged = len(req) >= calls and len(rep) >= calls and calls > 0
if not logged:
    print("RUN/llm does NOT hold every exchange")
if req:
    try:
        body = json.load(open(os.path.join(llm, req[0])))
        text = json.dumps(body, indent=1)
        open(os.path.join(run, "prompt.txt"), "w").write(text)
    except Exception as x:
        print("could not read %s: %s" % (req[0], x))

# A seed with tensor maps (kevo-blocks(5)): every child the replies made
# must still declare them, whether the reply carried the launch block or
# the parser restored the parent's.
task = json.load(open(sys.argv[2]))
seed = open(os.path.join(os.path.dirname(sys.argv[2]), task["seed"])).read()
maps = re.findall(r"^[ */]*tensormap\s+(\w+)", seed, re.M)
kept = True
if maps:
    kids = sorted(glob.glob(os.path.join(run, "candidates", "*.cu")))
    lost = []
    for path in kids:
        src = open(path).read()
        have = set(re.findall(r"^[ */]*tensormap\s+(\w+)", src, re.M))
        if not set(maps) <= have:
            lost.append(os.path.basename(path))
    print("tensor maps %s: in %d of %d candidates%s" % (
        ", ".join(maps), len(kids) - len(lost), len(kids),
        "; lost in " + ", ".join(lost) if lost else ""))
    kept = not lost and len(kids) > 0
sys.exit(0 if ok and logged and kept else 1)
PY
done
exit $status

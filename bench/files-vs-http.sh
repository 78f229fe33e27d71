#!/bin/sh
# files-vs-http.sh: one llm search answered twice, over HTTP by
# tests/loopback-serve and through the files transport by
# bench/files-replay.py, which writes the replies between the runs of a
# search that suspends (exit 4) whenever it waits and is resumed with
# --resume until it ends. The same replies come in the same order, so the
# two runs must make the same children from the same parents with the
# same verdicts. It prints, per evaluation, the candidate, its parents, its
# operator, its verdict and its fitness in both runs, the number of
# suspensions, and whether any request file was written twice, and exits 1
# when the runs differ (fitness apart: each run times its kernels anew).
#
#   bench/files-vs-http.sh [OUT] [TASK.json] [REPLIES] [EVALS]
#
# Run from the build directory on a GPU machine. Defaults: OUT
# runs/files-vs-http-YYYYmmdd-HHMMSS, TASK examples/tasks/saxpy.json,
# REPLIES tests/data/llm-variants-styles (replies in the styles real models
# write them, some broken), EVALS 8. The search options (--no-params, one
# request in flight, the run seed) are the same in both runs.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
out=${1:-runs/files-vs-http-$(date +%Y%m%d-%H%M%S)}
task=${2:-$srcdir/examples/tasks/saxpy.json}
replies=${3:-$srcdir/tests/data/llm-variants-styles}
evals=${4:-8}
kevo=./examples/kevo
serve=./tests/loopback-serve
for p in "$kevo" "$serve"; do
  [ -x "$p" ] || { echo "files-vs-http.sh: $p not found: run from the build directory after make check" >&2; exit 1; }
done
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-./operators/.libs}
export KEVO_OPERATOR_PATH
mkdir -p "$out" || exit 1
opts="--no-params --set depth=1 --seed 7 --evals $evals --quiet"

"$serve" "$replies" > "$out/url" 2> "$out/server.log" &
server=$!
i=0
while [ ! -s "$out/url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
cat > "$out/http.json" <<JSON
{"models": [{"api": "openai", "model": "loopback", "stream": false,
             "base_url": "$(head -n 1 "$out/url")/v1"}],
 "concurrency": 1}
JSON
echo "== over HTTP"
$kevo search $opts --llm "$out/http.json" "$task" -o "$out/http" > "$out/http.log" 2>&1
echo "(exit $?)"
kill $server 2>/dev/null
wait $server 2>/dev/null

cat > "$out/files.json" <<JSON
{"models": [{"api": "openai", "model": "loopback", "transport": "files",
             "dir": "$out/exchange"}],
 "concurrency": 1}
JSON
echo "== through files"
$kevo search $opts --llm "$out/files.json" "$task" -o "$out/files" > "$out/files.log" 2>&1
rc=$?
suspended=0
while [ $rc -eq 4 ] && [ $suspended -lt 200 ]; do
  suspended=$((suspended + 1))
  python3 "$srcdir/bench/files-replay.py" "$out/exchange" "$replies" | sed 's/^/  /'
  $kevo search --resume "$out/files" $opts --llm "$out/files.json" >> "$out/files.log" 2>&1
  rc=$?
done
echo "(exit $rc after $suspended suspensions)"

python3 - "$out" "$suspended" <<'PY'
import hashlib, json, os, sys

out, suspended = sys.argv[1], int(sys.argv[2])


def evals(run):
    rows = []
    for line in open(os.path.join(out, run, "events.jsonl")):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") != "eval":
            continue
        src = os.path.join(out, run, "candidates", "%s.cu" % e["id"])
        digest = hashlib.sha256(open(src, "rb").read()).hexdigest()[:12] \
            if os.path.exists(src) else "-"
        rows.append({"id": e["id"], "parents": e.get("parents"), "prompt": e.get("prompt"),
                     "operator": e.get("operator"), "verdict": e.get("verdict"),
                     "fitness": e.get("fitness") or 0.0, "source": digest})
    return rows


a, b = evals("http"), evals("files")
same = len(a) == len(b)
print("\n%-4s %-10s %-14s %-9s | %-14s %-9s %s" % ("id", "operator", "http verdict",
      "fitness", "files verdict", "fitness", "source"))
for x, y in zip(a, b):
    key = ("id", "parents", "prompt", "operator", "verdict", "source")
    ok = all(x[k] == y[k] for k in key)
    same = same and ok
    print("%-4s %-10s %-14s %-9.4f | %-14s %-9.4f %s%s" % (
        x["id"], x["operator"], x["verdict"], x["fitness"], y["verdict"], y["fitness"],
        x["source"], "" if ok else "  DIFFERS (parents %s vs %s, source %s vs %s)" % (
            x["parents"], y["parents"], x["source"], y["source"])))
sa = json.load(open(os.path.join(out, "http", "summary.json")))
sb = json.load(open(os.path.join(out, "files", "summary.json")))
ca, cb = (sa.get("champion") or {}).get("id"), (sb.get("champion") or {}).get("id")
print("champion: http %s, files %s; %d evaluations each (%d, %d); %d suspensions" % (
    ca, cb, len(a), len(a), len(b), suspended))
pend = [n for n in os.listdir(os.path.join(out, "exchange", "pending"))
        if n.endswith(".json") and not n.endswith(".meta.json")]
done = os.listdir(os.path.join(out, "exchange", "done"))
print("request files: %d pending, %d answered" % (len(pend), len(done)))
same = same and ca == cb and suspended >= 1
print("the runs decide alike: %s" % ("yes" if same else "NO"))
sys.exit(0 if same else 1)
PY

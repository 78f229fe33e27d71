#!/bin/sh
# transports.sh: one llm search on the GPU through every transport of the
# llm operator (kevo-llm(7)), each answered from the same reply list, in
# the same order, by a fresh tests/loopback-serve:
#
#   http             the interactive endpoint (the baseline)
#   batch-openai     OpenAI's batch API: files upload, batch, output file
#   batch-anthropic  Anthropic's message batches
#   batch-wait       OpenAI's batch API, each batch in progress at its first
#                    look (loopback-serve --batch-looks 1) and batch_wait_s
#                    0: the search stops whenever it waits on a batch (exit
#                    4) and is resumed with --resume until it ends
#   files            the files transport, answered between the runs by
#                    bench/files-replay.py: the search stops whenever it
#                    waits (exit 4) and is resumed with --resume until it
#                    ends
#   relay            the files transport answered by `kevo relay` over
#                    HTTP; the relay is stopped (SIGTERM) and started again
#                    while the search waits
#   relay-batch      the same, the relay answering through OpenAI's batch
#                    API
#
# Every run uses the same search options (--no-params, one request in
# flight, the run seed) and prices (2 and 8 per million input and output
# tokens). It prints, per evaluation, the candidate, its operator, its
# verdict and whether parents, prompt, verdict and source equal the HTTP
# run's; per run the suspensions, tokens and cost; and it exits 1 when a
# run decides otherwise than the HTTP run, when a batch run costs other
# than half of it, when a run through files counts, over all its resumed
# runs, other tokens than its reply files report (each reply once) or
# another cost than theirs, or when a request file was answered twice. A resumed run makes again what was logged after its
# checkpoint (events.jsonl's "resume" event): the last of each counts.
#
#   bench/transports.sh [OUT] [TASK.json] [REPLIES] [EVALS]
#
# From the build directory on a GPU machine. Defaults: OUT
# runs/transports-YYYYmmdd-HHMMSS, TASK examples/tasks/saxpy.json, REPLIES
# tests/data/llm-variants-styles (replies in the styles real models write,
# some broken), EVALS 8.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
out=${1:-runs/transports-$(date +%Y%m%d-%H%M%S)}
task=${2:-$srcdir/examples/tasks/saxpy.json}
replies=${3:-$srcdir/tests/data/llm-variants-styles}
evals=${4:-8}
kevo=./examples/kevo
serve=./tests/loopback-serve
for p in "$kevo" "$serve"; do
  [ -x "$p" ] || { echo "transports.sh: $p not found: run from the build directory after make check" >&2; exit 1; }
done
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-./operators/.libs}
export KEVO_OPERATOR_PATH
mkdir -p "$out" || exit 1
opts="--no-params --set depth=1 --seed 7 --evals $evals --quiet"
prices='"input_cost_per_mtok": 2, "output_cost_per_mtok": 8'
server=

start_server() { # $1: run name, $2: more options of loopback-serve; sets url
  "$serve" $2 "$replies" > "$out/$1.url" 2> "$out/$1.server.log" &
  server=$!
  i=0
  while [ ! -s "$out/$1.url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 "$out/$1.url")
}
stop_server() {
  kill $server 2>/dev/null
  wait $server 2>/dev/null
}
config() { # $1: run name, $2: the model's JSON fields
  printf '{"models": [{"model": "loopback", %s, %s}], "concurrency": 1}\n' \
    "$2" "$prices" > "$out/$1.json"
}
search() { # $1: run name; the rest: more options
  name=$1
  shift
  $kevo search $opts --llm "$out/$name.json" "$@" >> "$out/$name.log" 2>&1
}
resume() { # $1: run name (a resumed run keeps its options and operators)
  $kevo search --resume "$out/$1" --quiet >> "$out/$1.log" 2>&1
}
waits() { # $1: run name; the search's exit status in rc
  echo "$1: exit $rc after $2 suspensions" | tee "$out/$1.status"
}

for run in http batch-openai batch-anthropic; do
  start_server $run
  case $run in
    http) config $run "\"api\": \"openai\", \"stream\": false, \"base_url\": \"$url/v1\"" ;;
    batch-openai) config $run "\"api\": \"openai\", \"transport\": \"batch\", \"poll_interval_s\": 1, \"base_url\": \"$url/v1\"" ;;
    batch-anthropic) config $run "\"api\": \"anthropic\", \"transport\": \"batch\", \"poll_interval_s\": 1, \"base_url\": \"$url\"" ;;
  esac
  search $run "$task" -o "$out/$run"
  rc=$?
  stop_server
  waits $run 0
done

# batch-wait: stops while its batch is in progress, resumed until it ends
start_server batch-wait "--batch-looks 1"
config batch-wait "\"api\": \"openai\", \"transport\": \"batch\", \"poll_interval_s\": 0.05, \"batch_wait_s\": 0, \"base_url\": \"$url/v1\""
search batch-wait "$task" -o "$out/batch-wait"
rc=$?
n=0
while [ $rc -eq 4 ] && [ $n -lt 200 ]; do
  n=$((n + 1))
  resume batch-wait
  rc=$?
done
stop_server
waits batch-wait $n

# files, answered between the runs by files-replay.py
config files "\"api\": \"openai\", \"transport\": \"files\", \"dir\": \"$out/files.exchange\""
search files "$task" -o "$out/files"
rc=$?
n=0
while [ $rc -eq 4 ] && [ $n -lt 200 ]; do
  n=$((n + 1))
  python3 "$srcdir/bench/files-replay.py" "$out/files.exchange" "$replies" >> "$out/files.replay.log"
  resume files
  rc=$?
done
waits files $n

# relay, relay-batch: kevo relay answers over HTTP, or through OpenAI's
# batch API; it is stopped and started again while the search waits
relayed() { # $1: run name, $2: the relay's model fields (@URL@: the server)
  run=$1
  start_server $run
  printf '{"models": [{"model": "loopback", %s, %s}], "concurrency": 1}\n' \
    "$(echo "$2" | sed "s|@URL@|$url|")" "$prices" > "$out/$run.relay.json"
  config $run "\"api\": \"openai\", \"transport\": \"files\", \"dir\": \"$out/$run.exchange\""
  search $run "$task" -o "$out/$run"
  rc=$?
  $kevo relay "$out/$run.exchange" --llm "$out/$run.relay.json" >> "$out/$run.relay.log" 2>&1 &
  relay=$!
  n=0
  while [ $rc -eq 4 ] && [ $n -lt 200 ]; do
    n=$((n + 1))
    if [ $n -eq 2 ]; then # stop the relay while the search waits; start it again
      kill -TERM $relay 2>/dev/null
      wait $relay
      echo "relay stopped (exit $?) at suspension 2; started again" >> "$out/$run.relay.log"
      $kevo relay "$out/$run.exchange" --llm "$out/$run.relay.json" >> "$out/$run.relay.log" 2>&1 &
      relay=$!
    fi
    i=0 # until every request has its reply
    while [ $i -lt 300 ] && [ "$(ls "$out/$run.exchange/done" 2>/dev/null | grep -c '^[0-9]*\.json$')" -lt \
           "$(ls "$out/$run.exchange/pending" | grep -c '^[0-9]*\.json$')" ]; do
      sleep 0.1
      i=$((i + 1))
    done
    resume $run
    rc=$?
  done
  kill -TERM $relay 2>/dev/null
  wait $relay
  stop_server
  waits $run $n
}
relayed relay '"api": "openai", "base_url": "@URL@/v1"'
relayed relay-batch '"api": "openai", "transport": "batch", "poll_interval_s": 1, "base_url": "@URL@/v1"'

python3 - "$out" <<'PY'
import hashlib, json, os, re, sys

out = sys.argv[1]
runs = ["http", "batch-openai", "batch-anthropic", "batch-wait", "files", "relay",
        "relay-batch"]


def evals(run):
    rows = []
    path = os.path.join(out, run, "events.jsonl")
    if not os.path.exists(path):
        return rows
    for line in open(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("type") == "resume":
            # a resumed run makes again what was logged after its
            # checkpoint's evaluation n: the last of each counts
            while rows and rows[-1]["n"] > e.get("n", 0):
                rows.pop()
            continue
        if e.get("type") != "eval":
            continue
        src = os.path.join(out, run, "candidates", "%s.cu" % e["id"])
        # The loopback numbers each reply ("reply 3") by the requests it
        # has answered, and a batch run makes more requests (uploads,
        # polls) than the chat requests of the others: the number is left
        # out of the comparison.
        text = open(src).read() if os.path.exists(src) else None
        digest = hashlib.sha256(re.sub(r"reply \d+", "reply #", text).encode()).hexdigest()[:12] \
            if text is not None else "-"
        rows.append({"n": e.get("n", 0), "id": e["id"], "parents": e.get("parents"), "prompt": e.get("prompt"),
                     "operator": e.get("operator"), "verdict": e.get("verdict"),
                     "fitness": e.get("fitness") or 0.0, "source": digest})
    return rows


def replied(run):
    """The input and output tokens the replies in DIR/done report."""
    d = os.path.join(out, run + ".exchange", "done")
    i = o = 0
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if not re.match(r"^[0-9]+\.json$", n):
            continue
        try:
            u = json.load(open(os.path.join(d, n))).get("usage") or {}
        except (OSError, ValueError):
            continue
        i += u.get("prompt_tokens", u.get("input_tokens", 0))
        o += u.get("completion_tokens", u.get("output_tokens", 0))
    return (i, o)


def summary(run):
    try:
        return json.load(open(os.path.join(out, run, "summary.json")))
    except (OSError, ValueError):
        return {}


base = evals("http")
key = ("id", "parents", "prompt", "operator", "verdict", "source")
ok_all = bool(base)
print("\n%-4s %-8s %-14s %s" % ("id", "operator", "http verdict", "  ".join(runs[1:])))
table = {r: evals(r) for r in runs[1:]}
for i, x in enumerate(base):
    marks = []
    for r in runs[1:]:
        y = table[r][i] if i < len(table[r]) else None
        same = y is not None and all(x[k] == y[k] for k in key)
        diff = [k for k in key if y is not None and x[k] != y[k]]
        mark = "-" if y is None else y["verdict"] + (
            "" if same else " (DIFFERS: %s)" % ",".join(diff))
        marks.append(mark.ljust(len(r)))
    print("%-4s %-8s %-14s %s" % (x["id"], x["operator"], x["verdict"], "  ".join(marks)))
cost0 = None
for r in runs:
    s = summary(r)
    cost = s.get("cost")
    tokens = (s.get("input_tokens"), s.get("output_tokens"))
    champ = (s.get("champion") or {}).get("id")
    st = open(os.path.join(out, r + ".status")).read().strip() if os.path.exists(
        os.path.join(out, r + ".status")) else "?"
    rows = table.get(r, base)
    same = len(rows) == len(base) and all(
        all(a[k] == b[k] for k in key) for a, b in zip(base, rows))
    same = same and champ == (summary("http").get("champion") or {}).get("id")
    if r == "http":
        cost0 = cost
    half = ""
    if r.startswith("batch") and cost is not None and cost0:
        # half of what its own tokens cost at the interactive prices
        full = (tokens[0] * 2 + tokens[1] * 8) / 1e6
        half = ", cost / http %.4f, cost / its tokens at full price %.4f" % (
            cost / cost0, cost / full if full else 0)
        same = same and full > 0 and abs(cost / full - 0.5) < 1e-6
    if r in ("files", "relay", "relay-batch"):
        # the search counts each reply once over all its runs: its tokens
        # are those the reply files report, summed, and its cost theirs at
        # its own (interactive) prices
        got = replied(r)
        want = (got[0] * 2 + got[1] * 8) / 1e6
        half += ", reply files' tokens %s" % (got,)
        same = same and tokens == got and got[0] > 0 and cost is not None \
            and abs(cost - want) <= 1e-6 * max(1.0, want)
    print("%-16s %s; %d evaluations, champion %s, tokens %s, cost %s%s: %s" % (
        r, st, len(rows), champ, tokens, cost, half,
        "decides as http" if same else "DIFFERS"))
    ok_all = ok_all and same
for r in ("files", "relay", "relay-batch"):
    d = os.path.join(out, r + ".exchange")
    if os.path.isdir(d):
        pend = [n for n in os.listdir(os.path.join(d, "pending"))
                if n.endswith(".json") and not n.endswith(".meta.json")]
        done = [n for n in os.listdir(os.path.join(d, "done")) if n.endswith(".json")]
        print("%s: %d request files, %d replies" % (r, len(pend), len(done)))
        ok_all = ok_all and len(pend) == len(done)
sys.exit(0 if ok_all else 1)
PY

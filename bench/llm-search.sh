#!/bin/sh
# llm-search.sh: a search of saxpy with the llm operator (and params)
# against the loopback server, which answers with the kernels of
# tests/data/llm-variants (or of the directory LLM_VARIANTS names, such as
# one holding kernels that trap or hang) round robin: no network, no API
# key. Prints the operator and prompt tables of the run's summary.json.
#
#   bench/llm-search.sh [EVALS] [OUT]     (from the build directory)
#
# EVALS defaults to 60; OUT (the run directory) to
# runs/llm-search-YYYYmmdd-HHMMSS. KEVO_SRCDIR and KEVO_BUILDDIR name the
# source and build trees when they are not the script's tree and the
# current directory. Needs a GPU (the search exits 3 without one) and
# python3.
srcdir=${KEVO_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${KEVO_BUILDDIR:-.}
evals=${1:-60}
variants=${LLM_VARIANTS:-$srcdir/tests/data/llm-variants}
out=${2:-runs/llm-search-$(date +%Y%m%d-%H%M%S)}
kevo=$builddir/examples/kevo
serve=$builddir/tests/loopback-serve
for p in "$kevo" "$serve"; do
  [ -x "$p" ] || { echo "llm-search.sh: $p not found: run make check first" >&2; exit 1; }
done
command -v python3 >/dev/null || { echo "llm-search.sh: python3 not found" >&2; exit 1; }

tmp=$(mktemp -d) || exit 1
"$serve" "$variants" > "$tmp/url" 2> "$tmp/server.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$tmp"' EXIT
i=0
while [ ! -s "$tmp/url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$tmp/url")
case "$url" in
  http://*) ;;
  *) echo "llm-search.sh: the loopback server did not start:" >&2
     cat "$tmp/server.log" >&2; exit 1 ;;
esac
cat > "$tmp/llm.json" <<JSON
{"models": [{"api": "openai", "model": "loopback", "base_url": "$url/v1",
             "timeout_s": 60}],
 "concurrency": 8, "reply_format": "whole"}
JSON
echo "loopback server: $url (kernels of $variants)"

KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$builddir/operators/.libs}
export KEVO_OPERATOR_PATH
"$kevo" search --llm "$tmp/llm.json" --prompts "$srcdir/prompts" \
  --evals "$evals" "$srcdir/examples/tasks/saxpy.json" -o "$out"
rc=$?
kill $server 2>/dev/null
wait $server 2>/dev/null
sed 's/^/server: /' "$tmp/server.log"
if [ ! -f "$out/summary.json" ]; then
  echo "llm-search.sh: no $out/summary.json (kevo search exited $rc)" >&2
  exit 1
fi

python3 - "$out/summary.json" <<'PY'
import json, sys

s = json.load(open(sys.argv[1]))

def f(v, fmt="{:.3f}"):
    return "-" if v is None else fmt.format(v)

def table(title, cols, rows):
    print("\n" + title)
    w = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
         for i, c in enumerate(cols)]
    print("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)))
    print("  ".join("-" * x for x in w))
    for r in rows:
        print("  ".join(v.ljust(w[i]) for i, v in enumerate(r)))

champ = s.get("champion") or {}
print("\n%s: %s after %d evaluations (%s), %.1f s, %.2f evals/s" % (
    s.get("task"), s.get("state"), s.get("evaluations", 0),
    s.get("stop_reason"), s.get("elapsed") or 0, s.get("evals_per_second") or 0))
print("champion: %s fitness %s by %s; coverage %s; tokens %d in, %d out" % (
    champ.get("id", "-"), f(champ.get("fitness")), champ.get("operator", "-"),
    f((s.get("archive") or {}).get("coverage")),
    s.get("input_tokens", 0), s.get("output_tokens", 0)))
def pct(v):
    return "-" if v is None else "{:.1f}%".format(100 * v)

def kinds(k):
    return ", ".join("%s %d" % (n, c) for n, c in (k or {}).items()) or "-"

v = s.get("validity") or {}
print("validity: %s of %d proposals; first attempts %s, after %d repairs %s"
      " (repair_turns %s)" % (
    pct(v.get("validity")), v.get("proposals", 0), pct(v.get("validity_first")),
    v.get("repairs", 0), pct(v.get("validity_repaired")),
    v.get("repair_turns", "-")))
table("operators",
      ["name", "plugin", "weight", "requests", "children", "evaluated",
       "entered", "improved", "failures", "validity", "repairs",
       "after repair", "in tokens", "out tokens"],
      [[o["name"], o.get("plugin", ""), f(o.get("weight"), "{:g}"),
        str(o.get("requests", 0)), str(o.get("children", 0)),
        str(o.get("evaluated", 0)), str(o.get("entered", 0)),
        str(o.get("improved", 0)), str(o.get("failures", 0)),
        pct(o.get("validity")), str(o.get("repairs", 0)),
        pct(o.get("validity_repaired")),
        str(o.get("input_tokens", 0)), str(o.get("output_tokens", 0))]
       for o in s.get("operators", [])])
table("prompts",
      ["id", "name", "parent", "gen", "uses", "children", "entered",
       "beat parent", "best", "mean", "validity", "after repair",
       "failures"],
      [[str(p["id"]), p.get("name", ""), str(p.get("parent", 0)),
        str(p.get("generation", 0)), str(p.get("uses", 0)),
        str(p.get("children", 0)), str(p.get("entered", 0)),
        str(p.get("beat_parent", 0)), f(p.get("best_fitness")),
        f(p.get("mean")), pct(p.get("validity")),
        pct(p.get("validity_repaired")), kinds(p.get("failure_kinds"))]
       for p in s.get("prompts", [])])
PY
exit $rc

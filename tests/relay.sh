#!/bin/sh
# relay.sh: kevo relay against the loopback server program (loopback-serve,
# serving tests/data/llm-variants-styles round robin), with real processes
# throughout.
#
# 1. A scored search (relay-search) over HTTP, for reference.
# 2. The same search through the files transport: it stops to wait (exit
#    4) at every request; between its runs kevo relay answers, started
#    with --once, or in the background and stopped by SIGTERM or SIGKILL
#    once it wrote the reply. The search resumes each time and decides as
#    over HTTP; every request was written once, sent once, answered once.
# 3. Requests written by hand: a relay stopped by SIGTERM while a request
#    is in flight writes its reply first; one killed by SIGKILL leaves it,
#    and the next relay answers it with a failure instead of sending it
#    again; two signals end a relay at once, the request in flight
#    answered with a failure; malformed requests and sidecars are named,
#    with the field, and left while the others go on; a body that asks
#    for a stream gets the whole reply; two relays on one directory send
#    each request once between them.
# 4. The search of 2 answered by kevo relay through OpenAI's batch API and
#    through Anthropic's: it decides as over HTTP, at half the cost.
# 5. Requests in batches: a relay stopped by SIGTERM while its batch is in
#    progress exits at once, leaving the batch to the next relay, which
#    takes the requests back without sending them again; an expired batch
#    gives a timeout failure, a cancelled one a transport failure, an
#    error of one request an http_error failure; a budget spent keeps a
#    request out of its batch; a request still gathered when the relay
#    stops is sent by the next.
. "${KEVO_SRCDIR:-.}/tests/tap.sh"
kevo="$builddir/examples/kevo"
search="$builddir/tests/relay-search"
serve="$builddir/tests/loopback-serve"
replies="$srcdir/tests/data/llm-variants-styles"

tmp=$(mktemp -d) || exit 1
server=
relay=
cleanup() {
  [ -n "$relay" ] && kill -KILL "$relay" 2>/dev/null
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
count() { # DIR PATTERN: files of DIR whose names match the grep PATTERN
  ls "$1" 2>/dev/null | grep -c "$2"
}
start_server() { # NAME: a loopback server; its URL in $url
  "$serve" "$replies" > "$tmp/$1.url" 2> "$tmp/$1.serve" &
  server=$!
  i=0
  while [ ! -s "$tmp/$1.url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 "$tmp/$1.url")
}
stop_server() { # NAME: stops it; how many requests it answered in $served,
  # how many batches were created in $batches
  kill "$server"
  wait "$server"
  server=
  served=$(sed -n 's/^loopback-serve: \([0-9]*\) requests answered$/\1/p' "$tmp/$1.serve")
  batches=$(sed -n 's/^loopback-serve: \([0-9]*\) batches created$/\1/p' "$tmp/$1.serve")
}
ledger() { # DIR: the input and output tokens and the cost its marks record
  cat "$1"/sent/*.json | awk -F': ' '/"input_tokens"/ { i += $2 }
    /"output_tokens"/ { o += $2 } /"cost"/ { c += $2 }
    END { printf "%d %d %.12g\n", i, o, c }'
}
price_ratio() { # IN OUT COST: COST over those tokens at the prices below
  echo "$@" | awk '{ printf "%.9f\n", $3 / (($1 * 2 + $2 * 8) / 1e6) }'
}
prices='"input_cost_per_mtok": 2, "output_cost_per_mtok": 8'

wait_for() { # FILE: waits up to 20 s for it to exist
  i=0
  while [ ! -e "$1" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}
start_relay() { # DIR: kevo relay in the background, its pid in $relay
  "$kevo" relay "$1" --llm "$tmp/relay.json" --interval 0.1 >> "$tmp/relay.out" 2>> "$tmp/relay.err" &
  relay=$!
}
stop_relay() { # SIGNAL: its exit status in $rc
  kill "-$1" "$relay"
  { wait "$relay"; } 2> /dev/null
  rc=$?
  relay=
}
same_with_repair() { # A B: the same evaluations, among them a compile
  # error (1-compile-error.cu), whose repair turn a resumed run takes back
  [ "$(grep -c ' compile_error ' "$1")" -ge 1 ] && cmp -s "$1" "$2"
}
evals=8
search_once() { # CONFIG RUN TRACE: one run of the search (resumed after
  # the first, counted in $runs), the run's evaluations so far in TRACE
  # (those a resumed run made again counted once), its status in $rc
  resume=
  [ $runs -gt 0 ] && resume=resume
  "$search" "$1" $evals "$2" $resume > "$tmp/files.out" 2>> "$tmp/files.err"
  rc=$?
  runs=$((runs + 1))
  tail -n +2 "$tmp/files.out" > "$3"
}

# ---- 1. over HTTP -----------------------------------------------------------
start_server http
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1"}], "max_retries": 0}\n' \
  "$url" > "$tmp/http.json"
"$search" "$tmp/http.json" $evals "$tmp/run-http" > "$tmp/http.out" 2> "$tmp/http.err"
rc=$?
stop_server http
check "the search over HTTP ends (status $rc)" [ $rc -eq 0 ]
http_served=$served
tail -n +2 "$tmp/http.out" > "$tmp/http.trace"

# ---- 2. through files, answered by kevo relay ------------------------------
start_server files
dir="$tmp/requests"
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1", %s}], "max_retries": 0}\n' \
  "$url" "$prices" > "$tmp/relay.json"
printf '{"models": [{"api": "openai", "model": "m", "transport": "files", "dir": "%s"}]}\n' \
  "$dir" > "$tmp/files.json"
runs=0
waits=0
one_each=yes
relays_ok=yes
: > "$tmp/files.trace"
while [ $runs -lt 30 ]; do
  search_once "$tmp/files.json" "$tmp/run-files" "$tmp/files.trace"
  [ $rc -eq 4 ] || break
  waits=$((waits + 1))
  pending=$(count "$dir/pending" '^[0-9]*\.json$')
  done=$(count "$dir/done" '^[0-9]*\.json$')
  [ "$pending" -eq $((done + 1)) ] || one_each=no
  next=$(printf '%s/done/%06d.json' "$dir" "$pending")
  case $((waits % 3)) in
  1) # once, until nothing is left
    "$kevo" relay "$dir" --llm "$tmp/relay.json" --once >> "$tmp/relay.out" 2>> "$tmp/relay.err" ||
      relays_ok=no ;;
  2) # in the background, stopped by SIGTERM once it answered
    start_relay "$dir"
    wait_for "$next" || relays_ok=no
    stop_relay TERM
    [ $rc -eq 0 ] || relays_ok=no ;;
  0) # in the background, killed once it answered
    start_relay "$dir"
    wait_for "$next" || relays_ok=no
    stop_relay KILL ;;
  esac
done
stop_server files
check "the search through files ends (status $rc)" [ $rc -eq 0 ]
check "it stopped to wait $waits times, each with exit status 4" [ $waits -ge 5 ]
check "each stop left one new request, none written twice" [ $one_each = yes ]
check "kevo relay answered each time: --once, and stopped by SIGTERM (exit 0) or SIGKILL" \
  [ $relays_ok = yes ]
nreq=$(count "$dir/pending" '^[0-9]*\.json$')
check "every request answered: $nreq request files, $(count "$dir/done" '^[0-9]*\.json$') replies" \
  [ "$(count "$dir/done" '^[0-9]*\.json$')" -eq "$nreq" ]
marks=$(count "$dir/sent" '^[0-9]*\.json$')
check "... each sent once: $served reached the server, $marks marks" \
  [ "$served" -eq "$nreq" -a "$marks" -eq "$nreq" ]
check "as many requests as over HTTP ($http_served)" [ "$served" -eq "$http_served" ]
check "the same $(grep -c ' id ' "$tmp/http.trace") evaluations, with a repair, scored the same, in the same order as over HTTP" \
  same_with_repair "$tmp/http.trace" "$tmp/files.trace"
grep -q 'answering .*/pending with 1 model' "$tmp/relay.err"
check "the relay says what it answers" [ $? -eq 0 ]
check "... and nothing failed" [ "$(grep -c 'failed:' "$tmp/relay.err")" -eq 0 ]
http_ledger=$(ledger "$dir")

# ---- 3. requests written by hand ------------------------------------------
start_server hand
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1"}], "max_retries": 0}\n' \
  "$url" > "$tmp/relay.json"
hand="$tmp/hand"
mkdir -p "$hand/pending"
request() { # NUMBER CONTENT [STREAM [MODEL]]: a request and its sidecar
  p=$(printf '%s/pending/%06d' "$hand" "$1")
  printf '{"number": %d, "api": "openai", "path": "/v1/chat/completions", "model": "%s"}\n' \
    "$1" "${4:-m}" > "$p.meta.json"
  opts=
  [ "${3:-false}" = true ] && opts=', "stream_options": {"include_usage": true}'
  printf '{"model": "m", "messages": [{"role": "user", "content": "%s"}], "max_tokens": 100, "stream": %s%s}\n' \
    "$2" "${3:-false}" "$opts" > "$p.json"
}
mark() { printf '%s/sent/%06d.json' "$hand" "$1"; }
reply() { printf '%s/done/%06d.json' "$hand" "$1"; }

: > "$tmp/relay.err"
request 1 '[[kevo-loopback:a:slow:1500]] go'
start_relay "$hand"
wait_for "$(mark 1)"
stop_relay TERM
check "SIGTERM while a request is in flight: exit 0 ($rc)" [ $rc -eq 0 ]
grep -q '"choices"' "$(reply 1)" 2>/dev/null
check "... after writing its reply" [ $? -eq 0 ]
grep -q '"outcome": "ok"' "$(mark 1)"; check "... and ending its mark" [ $? -eq 0 ]
grep -q 'stopping once 1 request in flight has its reply' "$tmp/relay.err"
check "... saying it waits for it" [ $? -eq 0 ]

request 2 '[[kevo-loopback:b:slow:3000]] go'
start_relay "$hand"
wait_for "$(mark 2)"
stop_relay KILL
check "SIGKILL while a request is in flight leaves no reply" [ ! -e "$(reply 2)" ]
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2>> "$tmp/relay.err"
grep -q '"kevo_relay"' "$(reply 2)" 2>/dev/null &&
  grep -q 'stopped before its reply came; it is not sent again' "$(reply 2)"
check "the next relay answers it with a failure, not sent again" [ $? -eq 0 ]
grep -q '"outcome": "lost"' "$(mark 2)"; check "... and its mark says lost" [ $? -eq 0 ]

request 3 '[[kevo-loopback:c:slow:8000]] go'
start_relay "$hand"
wait_for "$(mark 3)"
start=$(date +%s)
kill -TERM "$relay"
sleep 0.3
stop_relay TERM
took=$(($(date +%s) - start))
check "a second signal ends the relay at once ($took s, exit $rc)" [ $rc -eq 0 -a $took -lt 6 ]
grep -q 'the relay stopped while the request was in flight; it is not sent again' "$(reply 3)" 2>/dev/null
check "... the request in flight answered with a failure" [ $? -eq 0 ]

request 4 'not JSON'
printf '{"model": "m", "messages": [' > "$hand/pending/000004.json"
request 5 'no model in the sidecar'
printf '{"number": 5, "api": "openai", "path": "/v1/chat/completions"}\n' > "$hand/pending/000005.meta.json"
request 6 'a model the relay lacks' false nosuch
request 7 'a stream' true
request 8 'to an endpoint of another API'
sed -i 's|/v1/chat/completions|/v1/messages|' "$hand/pending/000008.meta.json"
: > "$tmp/relay.err"
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay.err"
rc=$?
sed 's/^/# /' "$tmp/relay.err"
check "--once with requests left for problems exits 1 ($rc)" [ $rc -eq 1 ]
grep -q "pending/000004.json is not JSON: .*line 1" "$tmp/relay.err"
check "a request that is not JSON is named" [ $? -eq 0 ]
grep -q 'pending/000005.meta.json: \$\.model: must be a string' "$tmp/relay.err"
check "a sidecar without model is named, with the field" [ $? -eq 0 ]
grep -q 'pending/000006.meta.json: \$\.model: the relay.s configuration has no model "nosuch" of api openai (its models: m (openai))' "$tmp/relay.err"
check "a model the configuration lacks is named, with those it has" [ $? -eq 0 ]
grep -q 'pending/000008.meta.json: \$\.path: "/v1/messages" is not the openai endpoint' "$tmp/relay.err"
check "a path of another API is named" [ $? -eq 0 ]
left=0
for i in 4 5 6 8; do [ -e "$(reply $i)" ] || [ -e "$(mark $i)" ] || left=$((left + 1)); done
check "... and none of them is answered or marked" [ $left -eq 4 ]
grep -q '000007: sent to m (http, streamed)' "$tmp/relay.err"
check "the others go on: the body that asks for a stream is sent streamed" [ $? -eq 0 ]
if command -v python3 > /dev/null 2>&1; then
  python3 - "$(reply 7)" << 'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["choices"][0]["message"]
assert r["object"] == "chat.completion" and m["content"], r
assert r["usage"]["prompt_tokens"] > 0 and r["choices"][0]["finish_reason"], r
PY
  check "... and its reply is the whole reply, with content, usage and finish" [ $? -eq 0 ]
fi
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay.err"
check "a relay started again tells the problems again (they may be fixed)" \
  [ "$(grep -c 'left waiting' "$tmp/relay.err")" -eq 4 ]
# Two relays on one directory at once: each request goes out once.
for i in 9 10 11 12; do request $i "[[kevo-loopback:two$i:slow:300]] go"; done
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay1.err" &
one=$!
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay2.err"
wait $one
answered=0
for i in 9 10 11 12; do grep -q '"choices"' "$(reply $i)" 2>/dev/null && answered=$((answered + 1)); done
sent=$(cat "$tmp/relay1.err" "$tmp/relay2.err" | grep -c ': sent to m')
check "two relays at once: 4 requests answered ($answered), 4 sent between them ($sent)" \
  [ $answered -eq 4 -a "$sent" -eq 4 ]
stop_server hand
check "the server got each request sent once: 8 ($served)" [ "$served" -eq 8 ]

# ---- 4. through files, answered by kevo relay through the batch APIs -------
for api in openai anthropic; do
  start_server "batch-$api"
  bdir="$tmp/batch-$api"
  base="$url"
  [ $api = openai ] && base="$url/v1"
  printf '{"models": [{"api": "%s", "model": "m", "base_url": "%s", "transport": "batch", "poll_interval_s": 0.05, %s}], "max_retries": 0}\n' \
    "$api" "$base" "$prices" > "$tmp/relay-$api.json"
  printf '{"models": [{"api": "%s", "model": "m", "transport": "files", "dir": "%s"}]}\n' \
    "$api" "$bdir" > "$tmp/files-$api.json"
  runs=0
  relays_ok=yes
  : > "$tmp/batch-$api.trace"
  : > "$tmp/relay-$api.err"
  while [ $runs -lt 30 ]; do
    search_once "$tmp/files-$api.json" "$tmp/run-batch-$api" "$tmp/batch-$api.trace"
    [ $rc -eq 4 ] || break
    "$kevo" relay "$bdir" --llm "$tmp/relay-$api.json" --once >> "$tmp/relay.out" 2>> "$tmp/relay-$api.err" ||
      relays_ok=no
  done
  stop_server "batch-$api"
  nreq=$(count "$bdir/pending" '^[0-9]*\.json$')
  check "$api batch: the search through files ends (status $rc) after $runs runs" [ $rc -eq 0 ]
  check "... kevo relay answered each time, through $batches batches for $nreq requests" \
    [ $relays_ok = yes -a "$batches" -eq "$nreq" -a "$nreq" -gt 0 ]
  check "... every request answered, none failed" \
    [ "$(count "$bdir/done" '^[0-9]*\.json$')" -eq "$nreq" -a "$(grep -c 'failed:' "$tmp/relay-$api.err")" -eq 0 ]
  check "... the same children, scored the same, in the same order as over HTTP" \
    cmp -s "$tmp/http.trace" "$tmp/batch-$api.trace"
  n_batch=$(grep -c '"batch": {' "$bdir"/sent/*.json | grep -c ':1$')
  check "... each mark names its batch ($n_batch of $nreq)" [ "$n_batch" -eq "$nreq" ]
  batch_ledger=$(ledger "$bdir")
  echo "# input and output tokens, cost: over HTTP $http_ledger, through $api's batch API $batch_ledger"
  ratio=$(price_ratio $batch_ledger)
  check "... its tokens cost half their HTTP price ($ratio)" [ "$ratio" = 0.500000000 ]
  if [ $api = openai ]; then
    check "... as many tokens as over HTTP, at half the HTTP cost ($(price_ratio $http_ledger))" \
      [ "${batch_ledger% *}" = "${http_ledger% *}" -a "$(price_ratio $http_ledger)" = 1.000000000 ]
  fi
done

# ---- 5. requests in batches, written by hand -------------------------------
start_server stop
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1", "transport": "batch", "poll_interval_s": 0.1, %s}], "max_retries": 0}\n' \
  "$url" "$prices" > "$tmp/relay.json"
hand="$tmp/hand-batch"
mkdir -p "$hand/pending"
request 1 '[[kevo-batch:wait:30]] the first of a batch that runs long'
request 2 'the second of it' true
: > "$tmp/relay.err"
start_relay "$hand"
i=0
while ! grep -q '"batch"' "$(mark 2)" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
check "the relay sends both requests in one batch, named in their marks" \
  grep -q '"batch_loopback' "$(mark 1)"
sleep 0.5 # a few looks at the batch
start=$(date +%s)
stop_relay TERM
took=$(($(date +%s) - start))
check "SIGTERM while the batch is in progress: exit 0 at once ($rc, $took s)" [ $rc -eq 0 -a $took -lt 3 ]
check "... no reply written" [ ! -e "$(reply 1)" -a ! -e "$(reply 2)" ]
grep -q '000001: left in batch batch_loopback[0-9]* at the vendor' "$tmp/relay.err"
check "... the batch left to the next relay, so it says" [ $? -eq 0 ]
check "... nothing half-written" [ "$(find "$hand" -name '*.tmp*' -o -name '*.claim' | wc -l)" -eq 0 ]
ls "$hand/batches" | grep -q '^000001-batch.json$'
check "... the batch is recorded under DIR/batches" [ $? -eq 0 ]
request 3 '[[kevo-batch:expire:0]] a batch that expires'
: > "$tmp/relay.err"
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay.err"
rc=$?
sed 's/^/# /' "$tmp/relay.err"
check "a relay started again ends (exit $rc)" [ $rc -eq 0 ]
grep -q '000001: taken back into batch batch_loopback' "$tmp/relay.err" &&
  grep -q '000002: taken back into batch batch_loopback' "$tmp/relay.err"
check "... takes both requests back into their batch" [ $? -eq 0 ]
check "... sends only the new request" [ "$(grep -c ': sent to m' "$tmp/relay.err")" -eq 1 ]
grep -q '"choices"' "$(reply 1)" 2>/dev/null && grep -q '"choices"' "$(reply 2)" 2>/dev/null
check "... and writes their replies when the batch ends" [ $? -eq 0 ]
grep -q '"outcome": "timeout"' "$(reply 3)" 2>/dev/null
check "an expired batch gives a failure the search reads as a timeout" [ $? -eq 0 ]
grep -q '"outcome": "timeout"' "$(mark 3)"; check "... and its mark says so" [ $? -eq 0 ]
# A budget spent: the next request does not join a batch.
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1", "transport": "batch", "poll_interval_s": 0.1, %s}], "max_retries": 0, "token_budget": 10}\n' \
  "$url" "$prices" > "$tmp/budget.json"
request 4 'over the budget'
"$kevo" relay "$hand" --llm "$tmp/budget.json" --once > /dev/null 2> "$tmp/relay.err"
grep -q '"outcome": "budget"' "$(reply 4)" 2>/dev/null
check "a budget spent keeps a request out of its batch: a budget failure" [ $? -eq 0 ]
# Stopped while its request is still gathered: it was never sent, and the
# next relay sends it.
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1", "transport": "batch", "batch_gather_s": 600, %s}], "max_retries": 0}\n' \
  "$url" "$prices" > "$tmp/gather.json"
request 5 'gathered, never sent'
: > "$tmp/relay.err"
"$kevo" relay "$hand" --llm "$tmp/gather.json" --interval 0.1 >> "$tmp/relay.out" 2>> "$tmp/relay.err" &
relay=$!
wait_for "$(mark 5)"
sleep 0.3
stop_relay TERM
grep -q '000005: not sent yet: left for the next relay' "$tmp/relay.err" && [ ! -e "$(mark 5)" ]
check "SIGTERM while a request is gathered: exit 0 ($rc), its mark removed" [ $? -eq 0 -a $rc -eq 0 ]
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay.err"
grep -q '"choices"' "$(reply 5)" 2>/dev/null
check "... and the next relay sends it" [ $? -eq 0 ]
# A batch cancelled after its first request, which the vendor answered
# with an error.
request 6 '[[kevo-batch:cancel:1]] [[kevo-loopback:e6:400]] answered with an error'
request 7 'cancelled before it ran'
"$kevo" relay "$hand" --llm "$tmp/relay.json" --once > /dev/null 2> "$tmp/relay.err"
grep -q '"outcome": "http_error"' "$(reply 6)" 2>/dev/null && grep -q '"status": 400' "$(reply 6)"
check "a request the vendor answered with an error: an http_error failure, with its status" [ $? -eq 0 ]
grep -q '"outcome": "transport"' "$(reply 7)" 2>/dev/null
check "a request of a batch cancelled: a transport failure (a network failure to the search)" [ $? -eq 0 ]
stop_server stop
check "the server got 4 batches (one taken back, one that expired, one sent after a stop, one cancelled): $batches" \
  [ "$batches" -eq 4 ]

# ---- the command line -------------------------------------------------------
"$kevo" relay "$hand" > "$tmp/out" 2>&1; rc=$?
check "relay without --llm exits 2" [ $rc -eq 2 ]
"$kevo" relay --llm "$tmp/relay.json" > "$tmp/out" 2>&1; rc=$?
check "relay without a directory exits 2" [ $rc -eq 2 ]
printf '{"models": [{"api": "openai", "model": "m", "transport": "files", "dir": "x"}]}\n' > "$tmp/bad.json"
"$kevo" relay "$hand" --llm "$tmp/bad.json" --once > "$tmp/out" 2>&1; rc=$?
grep -q 'models\[0\]: "transport": "files" is a search' "$tmp/out"; named=$?
check "a configuration whose model uses files exits 1, naming the model ($rc)" \
  [ $rc -eq 1 -a $named -eq 0 ]
"$kevo" relay --help > "$tmp/out" 2>&1; rc=$?
grep -q -- '--once' "$tmp/out"; named=$?
check "relay --help exits 0 and tells of --once" [ $rc -eq 0 -a $named -eq 0 ]

echo "1..$n"
exit $status

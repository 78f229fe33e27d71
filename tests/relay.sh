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
stop_server() { # NAME: stops it; how many requests it answered in $served
  kill "$server"
  wait "$server"
  server=
  served=$(sed -n 's/^loopback-serve: \([0-9]*\) requests answered$/\1/p' "$tmp/$1.serve")
}
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
evals=8

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
printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1"}], "max_retries": 0}\n' \
  "$url" > "$tmp/relay.json"
printf '{"models": [{"api": "openai", "model": "m", "transport": "files", "dir": "%s"}]}\n' \
  "$dir" > "$tmp/files.json"
runs=0
waits=0
one_each=yes
relays_ok=yes
: > "$tmp/files.trace"
while [ $runs -lt 30 ]; do
  resume=
  [ $runs -gt 0 ] && resume=resume
  "$search" "$tmp/files.json" $evals "$tmp/run-files" $resume > "$tmp/files.out" 2>> "$tmp/files.err"
  rc=$?
  runs=$((runs + 1))
  tail -n +2 "$tmp/files.out" >> "$tmp/files.trace"
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
check "the same children, scored the same, in the same order as over HTTP" \
  cmp -s "$tmp/http.trace" "$tmp/files.trace"
grep -q 'answering .*/pending with 1 model' "$tmp/relay.err"
check "the relay says what it answers" [ $? -eq 0 ]
check "... and nothing failed" [ "$(grep -c 'failed:' "$tmp/relay.err")" -eq 0 ]

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

#!/bin/sh
# driver.sh: the kevo program as a user runs it: help, version, exit codes,
# `kevo tasks` over the whole suite, a clear error for a broken task, and
# for kernels whose launches do not match them (compiled with NVRTC, or
# said to be skipped without it);
# `kevo search` up to the GPU (and, where there is one, a short search,
# resumed, and one interrupted), and `kevo report`.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
kevo=$builddir/examples/kevo
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
status=0
check() { # name, condition result (0 = pass)
  n=$((n + 1))
  if [ "$2" -eq 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; status=1; fi
}

"$kevo" --help > "$tmp/out" 2>&1; rc=$?
check "--help exits 0" $rc
grep -q '^usage: kevo COMMAND' "$tmp/out"; check "--help prints usage" $?

"$kevo" --version > "$tmp/out" 2>&1; rc=$?
check "--version exits 0" $rc
grep -q '^kevo [0-9][0-9.]* (library [0-9][0-9.]*)$' "$tmp/out"; check "--version format" $?

"$kevo" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "no command exits 2" $?
"$kevo" frobnicate > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "unknown command exits 2" $?
grep -q "unknown command 'frobnicate'" "$tmp/out"; check "unknown command named" $?
"$kevo" tasks --bogus > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "unknown option exits 2" $?
"$kevo" tasks --help > "$tmp/out" 2>&1; rc=$?
check "tasks --help exits 0" $rc

"$kevo" tasks "$srcdir/examples/tasks" > "$tmp/out" 2> "$tmp/err"; rc=$?
check "kevo tasks validates the whole suite" $rc
[ $rc -eq 0 ] || sed 's/^/# /' "$tmp/err"
for t in saxpy reduce_sum transpose softmax layernorm stencil2d sgemm nbody histogram \
         gemm_bf16 attention_bf16 rmsnorm_bf16 gemv_w4a16; do
  grep -q "^$t " "$tmp/out"; check "suite lists $t" $?
done
grep -q '^13 tasks checked, 13 valid, 0 invalid$' "$tmp/out"; check "summary line" $?

"$kevo" tasks --json "$srcdir/examples/tasks/saxpy.json" > "$tmp/out" 2>&1; rc=$?
check "tasks --json exits 0" $rc
grep -q '"valid": true, "name": "saxpy"' "$tmp/out"; check "--json names the task" $?

# A broken task: a seed file that does not exist.
sed 's/"saxpy_seed.cu"/"saxpy_sead.cu"/' "$srcdir/examples/tasks/saxpy.json" > "$tmp/broken.json"
cp "$srcdir/examples/tasks/saxpy_ref.cu" "$tmp/"
"$kevo" tasks "$tmp/broken.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ]; check "invalid task exits 1" $?
grep -q 'broken.json: \$.seed: .*saxpy_sead.cu' "$tmp/err"; check "error names file, JSON path and missing source" $?
[ $rc -eq 1 ] || sed 's/^/# /' "$tmp/err"

"$kevo" tasks "$tmp/nothere.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ]; check "missing file exits 1" $?
grep -q 'nothere.json: No such file' "$tmp/err"; check "missing file named" $?

# The kernels are compiled (NVRTC, no GPU) and every launch is checked
# against its kernel: a kernel-name typo, a launch with 4 arguments for a
# 5-parameter kernel and a launch value that an int does not hold fail,
# naming the file, the JSON path, the source's line and the kernel.
if [ -x "$builddir/worker/kevo-worker" ]; then
  mkdir -p "$tmp/compile"
  cp "$srcdir/examples/tasks/saxpy.json" "$srcdir/examples/tasks/saxpy_ref.cu" "$tmp/compile/"
  sed 's/^ \*   saxpy<<</ *   saxpyy<<</' "$srcdir/examples/tasks/saxpy_seed.cu" > "$tmp/compile/saxpy_seed.cu"
  "$kevo" tasks "$tmp/compile/saxpy.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 1 ]; check "a kernel-name typo in the launch block exits 1" $?
  grep -q "saxpy.json: \$.seed: saxpy_seed.cu:11: kevo:launch: kernel 'saxpyy' (launch 1) is not defined in saxpy_seed.cu" "$tmp/err"
  check "the typo is named with the file, the line and the kernel" $?
  [ $rc -eq 1 ] || sed 's/^/# /' "$tmp/err"
  sed 's/(a, x, y, z, n)/(a, x, y, z)/' "$srcdir/examples/tasks/saxpy_seed.cu" > "$tmp/compile/saxpy_seed.cu"
  "$kevo" tasks "$tmp/compile/saxpy.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 1 ]; check "4 arguments for a 5-parameter kernel exits 1" $?
  grep -q "saxpy.json: \$.seed: saxpy_seed.cu:11: kevo:launch: kernel 'saxpy' takes 5 parameters and the launch passes 4 (a, x, y, z)" "$tmp/err"
  check "the missing argument is named with the file, the line and the kernel" $?
  [ $rc -eq 1 ] || sed 's/^/# /' "$tmp/err"
  "$kevo" tasks --json "$tmp/compile/saxpy.json" > "$tmp/out" 2>&1
  grep -q '"valid": false, "error": ".*takes 5 parameters' "$tmp/out"; check "--json says so too" $?
  "$kevo" tasks --no-compile "$tmp/compile/saxpy.json" > "$tmp/out" 2>&1; rc=$?
  check "--no-compile leaves the kernels alone" $rc
  grep -q '1 valid, 0 invalid (kernels not compiled)' "$tmp/out"; check "and says so" $?
  "$kevo" tasks --json "$srcdir/examples/tasks/saxpy.json" > "$tmp/out" 2>&1
  grep -q '"compiled": true' "$tmp/out"; check "--json: the suite's saxpy compiled" $?
  # Without a compiler the other checks still run, and the kernels are
  # said not to be compiled.
  KEVO_WORKER=$tmp/no-worker "$kevo" tasks "$srcdir/examples/tasks/saxpy.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
  check "without NVRTC kevo tasks exits 0" $rc
  grep -q 'not compiling the kernels' "$tmp/err" &&
    grep -q '1 valid, 0 invalid (kernels not compiled)' "$tmp/out"
  check "and says that it did not compile" $?
else
  "$kevo" tasks "$srcdir/examples/tasks/saxpy.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
  check "without NVRTC kevo tasks exits 0" $rc
  grep -q 'not compiling the kernels' "$tmp/err"; check "and says that it did not compile" $?
fi
# A launch value that an int does not hold, at every shape.
mkdir -p "$tmp/range"
cp "$srcdir/examples/tasks/saxpy.json" "$srcdir/examples/tasks/saxpy_ref.cu" "$tmp/range/"
sed 's/(a, x, y, z, n)/(a, x, y, z, n * 4096)/' "$srcdir/examples/tasks/saxpy_seed.cu" > "$tmp/range/saxpy_seed.cu"
"$kevo" tasks --no-compile "$tmp/range/saxpy.json" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ]; check "a launch value over an int's range exits 1" $?
grep -q "saxpy.json: \$.shapes\[0\]: seed saxpy_seed.cu:11: kevo:launch: argument 5 'n \* 4096' of 'saxpy' is 68719476736, which i32 does not hold" "$tmp/err"
check "the shape, the argument and the value are named" $?
[ $rc -eq 1 ] || sed 's/^/# /' "$tmp/err"

# ---- kevo search and kevo report ------------------------------------------
saxpy=$srcdir/examples/tasks/saxpy.json
# No API key: the search would add the llm operator for one.
unset ANTHROPIC_API_KEY OPENAI_API_KEY

"$kevo" --help > "$tmp/out" 2>&1
grep -q '^  search ' "$tmp/out" && grep -q '^  report ' "$tmp/out"
check "--help lists search and report" $?
for c in search report eval peaks tasks export; do
  "$kevo" $c --help > "$tmp/out" 2>&1; rc=$?
  check "$c --help exits 0" $rc
  grep -q "^usage: kevo $c" "$tmp/out"; check "$c --help prints its usage" $?
done
"$kevo" search --help > "$tmp/out" 2>&1
grep -q -- '--resume DIR' "$tmp/out"; check "search --help mentions --resume" $?
grep -q -- '--devices all|LIST' "$tmp/out"; check "search --help mentions --devices" $?
"$kevo" search --devices 0,x "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "kevo: --devices: option devices: '0,x' is not \"all\" or a list of device numbers such as 0,2,3" "$tmp/out"
check "search --devices with a bad list exits 2 and says why" $?
"$kevo" search --devices 1,1 "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "names device 1 twice" "$tmp/out"
check "search --devices naming a device twice exits 2" $?

"$kevo" search --bogus "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search: unknown option exits 2" $?
"$kevo" search > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search without a task exits 2" $?
"$kevo" search --evals many "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search --evals many exits 2" $?
grep -q "evals: bad value 'many'" "$tmp/out"; check "the bad value is named" $?

"$kevo" search --set nosuch=1 "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search --set nosuch=1 exits 2" $?
grep -q "no option 'nosuch'" "$tmp/out" && grep -q '^search options: seed max_evals' "$tmp/out" &&
  grep -q '^evaluator options: .*min_reps' "$tmp/out"
check "--set of an unknown name lists the search and evaluator options" $?
"$kevo" search --set islands=0 "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search --set islands=0 (out of bounds) exits 2" $?
grep -q 'option islands: 0 is below the lowest allowed value 1 (allowed 1\.\.64)' "$tmp/out"
check "the bounds are given" $?

# kevo eval: the evaluator's options and the gate's (a search's) by name,
# checked before the GPU starts, in the library's words.
seed=$srcdir/examples/tasks/saxpy_seed.cu
"$kevo" eval --held-out --set gate_slack_ppm=-1 "$saxpy" "$seed" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "eval --set gate_slack_ppm=-1 exits 2" $?
grep -q 'option gate_slack_ppm: -1 is below the lowest allowed value 0 (allowed 0\.\.10000000)' "$tmp/out"
check "the gate's bounds are given" $?
"$kevo" eval --set input_seeds=65 "$saxpy" "$seed" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q 'option input_seeds: 65 is above the highest allowed value 64 (allowed 2\.\.64)' "$tmp/out"
check "eval --set input_seeds=65 is refused, not cut to 64" $?
"$kevo" eval --set gate_top=3 "$saxpy" "$seed" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "no evaluator option 'gate_top'" "$tmp/out"
check "eval --set of a search option other than the gate's is refused" $?

"$kevo" search "$tmp/nothere.json" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "search of a missing task file exits 1" $?
grep -q "$tmp/nothere.json" "$tmp/out"; check "the missing task file is named" $?
printf '{"name": "broken", "dims": [' > "$tmp/malformed.json"
"$kevo" search "$tmp/malformed.json" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "search of a malformed task file exits 1" $?
grep -q 'malformed.json' "$tmp/out"; check "the malformed task file is named" $?
[ $rc -eq 1 ] || sed 's/^/# /' "$tmp/out"

"$kevo" search --no-params "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "search --no-params without another operator exits 2" $?
"$kevo" search --operator nosuch "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "search --operator of a missing plugin exits 1" $?
grep -q 'operator nosuch' "$tmp/out"; check "the missing plugin is named" $?
printf '{"models": [' > "$tmp/llm.json"
"$kevo" search --llm "$tmp/llm.json" "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "search --llm of a malformed config exits 1" $?
grep -q 'llm.json:1:' "$tmp/out"; check "the config file and line are named" $?

# A directory that holds a run already is refused before the GPU starts.
mkdir -p "$tmp/taken" && echo '{}' > "$tmp/taken/search.json"
"$kevo" search -o "$tmp/taken" "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "search into a directory that holds a run exits 1" $?
grep -q 'holds a run already' "$tmp/out"; check "it says so" $?

# --resume: the run's search.json, checked field by field.
mkdir -p "$tmp/empty"
"$kevo" search --resume "$tmp/empty" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "--resume of a directory without search.json exits 1" $?
grep -q "$tmp/empty/search.json" "$tmp/out"; check "the missing search.json is named" $?
"$kevo" search --resume "$tmp/empty" "$saxpy" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "--resume with a task exits 2" $?
"$kevo" search --resume "$tmp/empty" --seed 2 > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "--resume with another seed exits 2" $?
grep -q 'cannot change on a resumed run' "$tmp/out"; check "it says what cannot change" $?
mkdir -p "$tmp/badplan"
printf '%s\n' '{"format": "kevo-search", "version": 1, "device": 0,' \
  ' "operators": [{"plugin": "params", "name": "params", "weight": -1}],' \
  ' "options": {"max_evals": 10}}' > "$tmp/badplan/search.json"
"$kevo" search --resume "$tmp/badplan" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "--resume with a bad search.json exits 1" $?
grep -q 'badplan/search.json: \$\.operators\[0\]\.weight' "$tmp/out"
check "the error names the file and the field" $?
sed -i 's/"weight": -1/"weight": 1/; s/"max_evals"/"max_evalz"/' "$tmp/badplan/search.json"
"$kevo" search --resume "$tmp/badplan" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'search.json: \$\.options\.max_evalz: no such search option' "$tmp/out"
check "an unknown option in search.json is named" $?
# A run written when the gate's slack was an evaluator option resumes: the
# key moves to the search's options, and only a key neither knows is refused.
sed -i 's/"max_evalz"/"max_evals"/; s/"options"/"evaluator": {"gate_slack_ppm": 50000, "warmupz": 1}, "options"/' "$tmp/badplan/search.json"
"$kevo" search --resume "$tmp/badplan" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'search.json: \$\.evaluator\.warmupz: no such evaluator option' "$tmp/out" &&
  ! grep -q 'gate_slack_ppm' "$tmp/out"
check "gate_slack_ppm under \$.evaluator (older runs) is taken as a search option" $?
sed 's/"device": 0,/"device": 0, "devices": 2,/' "$tmp/badplan/search.json" > "$tmp/empty/search.json"
"$kevo" search --resume "$tmp/empty" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'search.json: \$\.devices: expected "all" or a list of device numbers' "$tmp/out"
check "devices in search.json that are not a string are named" $?
rm -f "$tmp/empty/search.json"
sed -i 's/"gate_slack_ppm": 50000/"gate_slack_ppm": "ten"/' "$tmp/badplan/search.json"
"$kevo" search --resume "$tmp/badplan" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q 'search.json: \$\.evaluator\.gate_slack_ppm: expected an integer' "$tmp/out"
check "a bad gate_slack_ppm under \$.evaluator is named where it stands" $?

# The GPU: without one, the evaluator's message, exit 3 and no run
# directory; with one, a short search, resumed, and one interrupted.
"$kevo" peaks > /dev/null 2>&1; gpu=$?
if [ $gpu -eq 3 ]; then
  "$kevo" search --evals 5 -o "$tmp/run" "$saxpy" > "$tmp/out" 2>&1; rc=$?
  [ $rc -eq 3 ]; check "search without a GPU exits 3" $?
  grep -q 'cannot evaluate on a GPU: ' "$tmp/out"; check "it says why" $?
  [ ! -e "$tmp/run" ]; check "and leaves no run directory" $?
  "$kevo" search --evals 5 --devices all -o "$tmp/run" "$saxpy" > "$tmp/out" 2>&1; rc=$?
  [ $rc -eq 3 ] && grep -q 'cannot evaluate on a GPU: ' "$tmp/out"
  check "search --devices all without a GPU exits 3 and says why" $?
else
  "$kevo" search --evals 6 --no-tune --devices 0 -o "$tmp/run" "$saxpy" > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ]; check "a short search exits 0 or 1 ($rc)" $?
  grep -q '^stopped: evaluations (the evaluation budget is spent); 6 evaluations' "$tmp/out"
  check "it prints why it stopped" $?
  for f in search.json task.json events.jsonl checkpoint.json summary.json report.html; do
    [ -s "$tmp/run/$f" ]; check "the run directory has $f" $?
  done
  if [ $rc -eq 0 ]; then
    grep -q '^champion: candidate [0-9]*, fitness' "$tmp/out" &&
      grep -q '^  held-out gate: passed' "$tmp/out" &&
      grep -q "best kernel  *$tmp/run/best.cu" "$tmp/out"
    check "it prints the champion, the gate and the paths" $?
  fi
  grep -q '"devices": "0"' "$tmp/run/search.json"; check "search.json keeps --devices" $?
  "$kevo" search --resume "$tmp/run" --evals 9 --json > "$tmp/out" 2> "$tmp/err"; rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 1 ]; check "--resume exits 0 or 1 ($rc)" $?
  grep -q '"devices": "0"' "$tmp/run/search.json"; check "the resumed run keeps its devices" $?
  [ "$(wc -l < "$tmp/out")" -eq 1 ] && grep -q '"format":"kevo-summary"' "$tmp/out" &&
    grep -q '"evaluations":9,' "$tmp/out"
  check "--resume --json prints one summary line, 9 evaluations in all" $?
  # The signal handlers are in place once the first line is out.
  "$kevo" search --evals 0 -o "$tmp/long" "$srcdir/examples/tasks/sgemm.json" \
    > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  i=0
  while [ $i -lt 300 ] && ! grep -q '^kevo: searching' "$tmp/err"; do
    sleep 0.1; i=$((i + 1))
  done
  kill -TERM $pid; wait $pid; rc=$?
  [ $rc -eq 143 ]; check "SIGTERM: exit 143 ($rc)" $?
  grep -q "search --resume $tmp/long" "$tmp/err"; check "it says how to resume" $?
  grep -q '^stopped: interrupted' "$tmp/out"; check "the summary says interrupted" $?
  # A model that answers every request with prose (tests/data/llm-prose,
  # served by loopback-serve): the search stops by itself after 20 requests
  # in a row without a child and says why, and RUN/llm/ holds a request and
  # a reply file for each request the server answered (the driver opens the
  # run after adding its operators).
  "$builddir/tests/loopback-serve" "$srcdir/tests/data/llm-prose" > "$tmp/url" 2> "$tmp/serve.err" &
  server=$!
  i=0
  while [ ! -s "$tmp/url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 "$tmp/url")
  printf '{"models": [{"api": "openai", "model": "loopback", "base_url": "%s/v1"}], "max_retries": 0}\n' \
    "$url" > "$tmp/prose.json"
  "$kevo" search --no-params --no-tune --llm "$tmp/prose.json" --evals 5 --devices 0 \
    --set depth=4 --set failure_backoff_ms=1 --set failure_backoff_max_ms=5 \
    -o "$tmp/prose" "$saxpy" > "$tmp/out" 2> "$tmp/err"; rc=$?
  kill $server; wait $server
  [ $rc -eq 0 ] || [ $rc -eq 1 ]; check "a search whose model writes prose ends by itself ($rc)" $?
  grep -q '^stopped: operator_failures' "$tmp/out"; check "it stops on the operator's failures" $?
  grep -q '^kevo: stopped: operator llm: 20 requests in a row .*(no_code 20); .*it began: "' "$tmp/err"
  check "it says why, quoting the reply" $?
  grep -q '^kevo: llm: stops at 20000000 tokens' "$tmp/err"; check "it printed the llm's limits first" $?
  served=$(sed -n 's/^loopback-serve: \([0-9]*\) requests answered$/\1/p' "$tmp/serve.err")
  nreq=$(ls "$tmp/prose/llm" | grep -c -- '-request\.json$')
  nrep=$(ls "$tmp/prose/llm" | grep -c -- '-reply\.json$')
  [ "${served:-0}" -ge 20 ] && [ "$served" -le 24 ]; check "20 to 24 requests ($served)" $?
  [ "$nreq" -eq "${served:-0}" ] && [ "$nrep" -eq "${served:-0}" ]
  check "RUN/llm/ holds a request and a reply for each ($nreq, $nrep)" $?
fi

# kevo report: a copy of a finished run, a missing directory, a bad summary.
cp -R "$srcdir/tests/data/report/full" "$tmp/full"
chmod -R u+w "$tmp/full"
"$kevo" report "$tmp/full" > "$tmp/out" 2>&1; rc=$?
check "report of a run exits 0" $rc
[ -s "$tmp/full/report.html" ]; check "report.html is written" $?
grep -qx "$tmp/full/report.html" "$tmp/out"; check "its path is printed" $?
"$kevo" report /nonexistent > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "report of /nonexistent exits 1" $?
grep -q '/nonexistent' "$tmp/out"; check "the directory is named" $?
cp -R "$srcdir/tests/data/report/bad-syntax" "$tmp/bad"
chmod -R u+w "$tmp/bad"
"$kevo" report "$tmp/bad" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ]; check "report of a malformed summary exits 1" $?
grep -q 'summary.json' "$tmp/out"; check "the file is named" $?
"$kevo" report > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "report without a directory exits 2" $?

# kevo export (a real run is exported by test-export and gpu-export.sh):
# the errors a user meets first.
"$kevo" export > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ]; check "export without a run exits 2" $?
"$kevo" export --target fortran "$tmp/full" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "c, torch or all" "$tmp/out"
check "export --target with a bad target exits 2 and says why" $?
"$kevo" export --name 'no name' "$tmp/full" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "a C identifier" "$tmp/out"
check "export --name with a bad name exits 2 and says why" $?
"$kevo" export "$tmp/full" -o "$tmp/pkg" > "$tmp/out" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -q "task.json" "$tmp/out"
check "export of a run without task.json exits 1 and names it" $?

echo "1..$n"
exit $status

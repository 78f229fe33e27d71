#!/bin/sh
# driver.sh: the kevo program as a user runs it: help, version, exit codes,
# `kevo tasks` over the whole suite, and a clear error for a broken task.
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
for t in saxpy reduce_sum transpose softmax layernorm stencil2d sgemm nbody histogram; do
  grep -q "^$t " "$tmp/out"; check "suite lists $t" $?
done
grep -q '^9 tasks checked, 9 valid, 0 invalid$' "$tmp/out"; check "summary line" $?

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

echo "1..$n"
exit $status

#!/bin/sh
# mpi-relay.sh: a search through the llm operator's files transport over
# MPI ranks (mpirun -np 3 relay-search --mpi: rank 0 searches and writes
# the requests, ranks 1 and 2 score). Each time it can only wait for
# replies, every rank exits with status 4 (so does mpirun), none hangs;
# kevo relay --once answers between the runs, and the search resumed
# under mpirun goes on, to the same decisions as the same search on one
# process answered the same way, each request written and sent once.
# Skips where kevo was built without MPI or there is no mpirun.
. "${KEVO_SRCDIR:-.}/tests/tap.sh"
kevo="$builddir/examples/kevo"
search="$builddir/tests/relay-search"
serve="$builddir/tests/loopback-serve"
if [ -z "$MPIRUN" ] || [ ! -x "$builddir/tests/mpi-search" ]; then
  echo "1..0 # SKIP kevo was built without MPI (configure --with-mpi)"
  exit 77
fi
mpi_flags

tmp=$(mktemp -d) || exit 1
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
evals=6
same_nonempty() { [ -s "$1" ] && cmp -s "$1" "$2"; }

# search NAME LAUNCH...: the search through files, answered by kevo relay
# --once between its runs, each run started by LAUNCH (nothing, or
# mpirun); leaves the run's evaluations in $tmp/NAME.trace (the last
# run's account of them, llm_search_evals()), the runs that waited
# (status 4) in $waits, the last status in $rc and the requests the
# server answered in $served. With $first set, the first run is made
# with it in the environment (an MCA setting), and its status in $rc1.
search() {
  name=$1
  shift
  "$serve" "$srcdir/tests/data/llm-variants-styles" > "$tmp/$name.url" 2> "$tmp/$name.serve" &
  server=$!
  i=0
  while [ ! -s "$tmp/$name.url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  url=$(head -n 1 "$tmp/$name.url")
  dir="$tmp/$name.requests"
  printf '{"models": [{"api": "openai", "model": "m", "base_url": "%s/v1"}], "max_retries": 0}\n' \
    "$url" > "$tmp/$name.relay.json"
  printf '{"models": [{"api": "openai", "model": "m", "transport": "files", "dir": "%s"}]}\n' \
    "$dir" > "$tmp/$name.files.json"
  : > "$tmp/$name.trace"
  waits=0
  runs=0
  while [ $runs -lt 20 ]; do
    resume=
    [ $runs -gt 0 ] && resume=resume
    env $([ $runs -eq 0 ] && echo $first) "$@" "$search" $mpi "$tmp/$name.files.json" \
      $evals "$tmp/$name.run" $resume > "$tmp/$name.out" 2> "$tmp/$name.err"
    rc=$?
    runs=$((runs + 1))
    tail -n +2 "$tmp/$name.out" > "$tmp/$name.trace"
    if [ $runs -eq 1 ] && [ -n "$first" ]; then
      rc1=$rc
      cp "$tmp/$name.err" "$tmp/$name.first.err"
      rc=4 # mpirun's own status there is 0: the ranks say theirs
    fi
    [ $rc -eq 4 ] || break
    waits=$((waits + 1))
    "$kevo" relay "$dir" --llm "$tmp/$name.relay.json" --once -q 2>> "$tmp/$name.relay.err"
  done
  kill "$server"
  wait "$server"
  server=
  served=$(sed -n 's/^loopback-serve: \([0-9]*\) requests answered$/\1/p' "$tmp/$name.serve")
  nreq=$(ls "$dir/pending" | grep -c '^[0-9]*\.json$')
}

mpi=
first=
search alone
check "one process: the search through files ends (status $rc) after $waits waits" \
  [ $rc -eq 0 -a $waits -ge 3 ]
alone_served=$served

# Under mpirun. By default Open MPI ends the job once a rank exits with a
# status other than 0, and mpirun's status is that rank's: 4. The first
# run lets every rank end by itself, so that each one's status is seen.
mpi=--mpi
first=OMPI_MCA_orte_abort_on_non_zero_status=0
search farm timeout 120 "$MPIRUN" $flags -np 3
sed 's/^/# /' "$tmp/farm.first.err" | grep 'exits'
check "the first run under mpirun -np 3: every rank exits with status 4" \
  [ "$(grep -c 'exits 4$' "$tmp/farm.first.err")" -eq 3 ]
check "mpirun -np 3: the resumed runs exit 4 while they wait, then 0 ($rc) after $waits waits" \
  [ $rc -eq 0 -a $waits -ge 3 ]
check "at the end all 3 ranks exited 0" [ "$(grep -c 'exits 0$' "$tmp/farm.err")" -eq 3 ]
check "each request written once and sent once ($nreq files, $served sent)" \
  [ "$nreq" -eq "$served" -a "$served" -eq "$alone_served" ]
check "the same decisions as on one process, in the same order ($(grep -c ' id ' "$tmp/alone.trace") evaluations)" \
  same_nonempty "$tmp/alone.trace" "$tmp/farm.trace"
echo "1..$n"
exit $status

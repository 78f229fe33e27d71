#!/bin/sh
# mpi.sh: a scored search over MPI ranks on this machine (mpirun -np 3:
# rank 0 searches, ranks 1 and 2 score), against the same search on one
# rank: every child judged exactly once and the same decisions in the
# same order; a run stopped and resumed across MPI runs as alone; a rank
# that dies (Open MPI then ends the whole job) loses only the work since
# the last checkpoint, and --resume finishes the run. Skips where kevo was
# built without MPI or there is no mpirun.
. "${KEVO_SRCDIR:-.}/tests/tap.sh"
prog="$builddir/tests/mpi-search"
if [ -z "$MPIRUN" ] || [ ! -x "$prog" ]; then
  echo "1..0 # SKIP kevo was built without MPI (configure --with-mpi)"
  exit 77
fi
mpi_flags
mpi() { # NP ARGS...: mpirun with NP ranks, 120 s at most
  np=$1
  shift
  timeout 120 "$MPIRUN" $flags -np "$np" "$prog" "$@"
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
field() { # FILE WORD: the word after WORD on the first line
  awk -v w="$2" '{ for (i = 1; i < NF; i++) if ($i == w) { print $(i + 1); exit } }' "$1"
}
trace() { sed 's/.* trace //' "$1"; }
summary() { # RUN EXPR: a jq-free look into summary.json with python3 or grep
  python3 -c "import json,sys; s=json.load(open('$1/summary.json')); print($2)" 2>/dev/null
}

# 1. The same decisions as one rank.
mpi 1 60 > "$tmp/alone.out" 2> "$tmp/alone.err"
check "one rank: the search ran" [ -s "$tmp/alone.out" ]
mpi 3 60 "$tmp/run" > "$tmp/farm.out" 2> "$tmp/farm.err"
check "mpirun -np 3: the search ran" [ -s "$tmp/farm.out" ]
sed 's/^/# /' "$tmp/farm.err"
check "60 children judged" [ "$(field "$tmp/farm.out" judged)" = 60 ]
check "... each exactly once" [ "$(field "$tmp/farm.out" duplicates)" = 0 ]
check "the same decisions as one rank, in the same order" \
  [ "$(trace "$tmp/alone.out")" = "$(trace "$tmp/farm.out")" ]
if command -v python3 >/dev/null 2>&1; then
  check "summary.json: the MPI transport" \
    [ "$(summary "$tmp/run" "s['farm']['transport']")" = MPI ]
  check "summary.json: ranks 1 and 2 scored every child but the seed" \
    [ "$(summary "$tmp/run" "sum(r['evaluations'] for r in s['farm']['ranks'])")" = 59 ]
fi

# 2. Stopped at 30, resumed to 70, across MPI runs, as alone.
mpi 1 30 "$tmp/a" > "$tmp/a1.out" 2>&1
mpi 1 70 "$tmp/a" resume > "$tmp/a2.out" 2>&1
mpi 3 30 "$tmp/b" > "$tmp/b1.out" 2>&1
mpi 3 70 "$tmp/b" resume > "$tmp/b2.out" 2>&1
check "resumed across MPI runs" [ -s "$tmp/b2.out" ]
check "... the first part decided as alone" \
  [ "$(trace "$tmp/a1.out")" = "$(trace "$tmp/b1.out")" ]
check "... the resumed part decided as alone" \
  [ "$(trace "$tmp/a2.out")" = "$(trace "$tmp/b2.out")" ]
check "... nothing judged twice" [ "$(field "$tmp/b2.out" duplicates)" = 0 ]

# 3. Rank 2 dies while scoring its 10th child: the job ends; --resume
# finishes it from the last checkpoint.
mpi 3 --die 2:10 50 "$tmp/c" > "$tmp/c1.out" 2> "$tmp/c1.err"
rc=$?
check "a rank that dies ends the MPI job (status $rc)" [ "$rc" -ne 0 ]
check "... its checkpoint is there" [ -s "$tmp/c/checkpoint.json" ]
if command -v python3 >/dev/null 2>&1; then
  kept=$(python3 -c "import json; print(json.load(open('$tmp/c/checkpoint.json'))['counters']['evaluations'])" 2>/dev/null)
  echo "# the checkpoint kept $kept evaluations"
fi
mpi 3 50 "$tmp/c" resume > "$tmp/c2.out" 2> "$tmp/c2.err"
sed 's/^/# /' "$tmp/c2.err"
check "--resume with all ranks finished the run" [ -s "$tmp/c2.out" ]
if command -v python3 >/dev/null 2>&1; then
  check "... to its 50 evaluations" \
    [ "$(summary "$tmp/c" "s['evaluations']")" = 50 ]
fi
echo "1..$n"
exit $status

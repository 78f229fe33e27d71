#!/bin/sh
# symbols.sh: libkevo.so exports exactly the functions listed in
# tests/symbols.txt, and exactly those the public headers declare with
# KEVO_API. After a deliberate change of the API, update the list with
# `make update-symbols` and the libtool version-info in configure.ac.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
lib=$builddir/lib/.libs/libkevo.so
if [ ! -f "$lib" ]; then
  echo "1..0 # SKIP no shared library at $lib (built with --disable-shared?)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort > "$tmp/exported"
sort "$srcdir/tests/symbols.txt" > "$tmp/listed"
# Declarations: every "KEVO_API <type> name(" in the headers, also when the
# name starts the next line.
cat "$srcdir"/include/kevo.h "$srcdir"/include/kevo/*.h |
  tr '\n' ' ' | grep -o 'KEVO_API[^;]*;' |
  grep -o 'kevo_[a-z0-9_]*[[:space:]]*(' | tr -d ' (' | sort -u > "$tmp/declared"

echo "1..4"
n=0
check() {
  n=$((n + 1))
  if diff -u "$2" "$3" > "$tmp/diff"; then
    echo "ok $n - $1"
  else
    echo "not ok $n - $1"
    sed 's/^/# /' "$tmp/diff"
    status=1
  fi
}
status=0
check "exported symbols match tests/symbols.txt" "$tmp/listed" "$tmp/exported"
check "exported symbols match the KEVO_API declarations" "$tmp/declared" "$tmp/exported"
n=$((n + 1))
if grep -v '^kevo_' "$tmp/exported" > "$tmp/bad"; then
  echo "not ok $n - every exported symbol starts with kevo_"
  sed 's/^/# /' "$tmp/bad"
  status=1
else
  echo "ok $n - every exported symbol starts with kevo_"
fi
n=$((n + 1))
if grep '^kevo__' "$tmp/exported" > "$tmp/bad"; then
  echo "not ok $n - no internal kevo__ symbol is exported"
  sed 's/^/# /' "$tmp/bad"
  status=1
else
  echo "ok $n - no internal kevo__ symbol is exported"
fi
exit $status

#!/bin/sh
# symbols.sh: libkevo.so exports exactly the functions listed in
# tests/symbols.txt, and exactly those the public headers declare with
# KEVO_API; the list says of each whether it is stable or experimental
# (kevo-api(7)), as the headers do: an experimental function is declared
# only when KEVO_EXPERIMENTAL is defined, a stable one always. The list
# holds one function a line: its name and "stable" or "experimental".
#
# After a deliberate change of the API, rewrite the list with
# `make update-symbols` (which runs this script with --write) and update
# the libtool version-info in configure.ac.
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
cc=${CC:-cc}
LC_ALL=C
export LC_ALL
lib=$builddir/lib/.libs/libkevo.so
if [ ! -f "$lib" ]; then
  echo "1..0 # SKIP no shared library at $lib (built with --disable-shared?)"
  exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
${NM:-nm} -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort > "$tmp/exported"

# Declarations as a program sees them: every "KEVO_API <type> name(" of
# <kevo.h> through the preprocessor, with and without KEVO_EXPERIMENTAL.
# KEVO_BUILDING_LIBRARY makes KEVO_API expand to a visibility attribute
# that marks the declarations in the preprocessed text.
declared() { # extra cpp flags -> sorted names
  printf '#include <kevo.h>\n' > "$tmp/t.c"
  $cc -E -P -DKEVO_BUILDING_LIBRARY "$@" -I"$builddir/include" \
    -I"$srcdir/include" "$tmp/t.c" |
    tr '\n' ' ' | grep -o 'visibility *( *"default" *) *) *)[^;]*;' |
    grep -o 'kevo_[a-z0-9_]*[[:space:]]*(' | tr -d ' (' | sort -u
}
declared -DKEVO_EXPERIMENTAL > "$tmp/declared" || exit 1
declared > "$tmp/stable" || exit 1
{
  sed 's/$/ stable/' "$tmp/stable"
  comm -23 "$tmp/declared" "$tmp/stable" | sed 's/$/ experimental/'
} | sort > "$tmp/marked"

if [ "$1" = --write ]; then
  join -a 1 -e '?' -o 0,2.2 "$tmp/exported" "$tmp/marked"
  exit 0
fi

sort "$srcdir/tests/symbols.txt" > "$tmp/listed"
cut -d' ' -f1 "$tmp/listed" > "$tmp/listed-names"

echo "1..5"
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
check "exported symbols match tests/symbols.txt" "$tmp/listed-names" "$tmp/exported"
check "exported symbols match the KEVO_API declarations" "$tmp/declared" "$tmp/exported"
check "tests/symbols.txt marks stable and experimental as the headers do" \
  "$tmp/listed" "$tmp/marked"
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

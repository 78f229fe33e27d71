#!/bin/sh
# headers.sh: every public header compiles on its own, as C11 with every
# warning on and as C++ (when a C++ compiler is there), so that a program
# can include any one of them first: with the stable declarations alone
# and with the experimental ones too (KEVO_EXPERIMENTAL, kevo-api(7)).
srcdir=${KEVO_SRCDIR:-.}
builddir=${KEVO_BUILDDIR:-.}
cc=${CC:-cc}
cxx=$(command -v c++ || command -v g++ || true)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
status=0
for mode in stable experimental; do
  flags=
  [ $mode = experimental ] && flags=-DKEVO_EXPERIMENTAL
  for h in "$srcdir"/include/kevo.h "$srcdir"/include/kevo/*.h; do
    name=${h#"$srcdir"/include/}
    printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$name" "$name" > "$tmp/t.c"
    n=$((n + 1))
    if $cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $flags \
         -I"$builddir/include" -I"$srcdir/include" "$tmp/t.c" 2> "$tmp/err"; then
      echo "ok $n - $name compiles alone as C11 ($mode)"
    else
      echo "not ok $n - $name compiles alone as C11 ($mode)"
      sed 's/^/# /' "$tmp/err"
      status=1
    fi
    [ -n "$cxx" ] || continue
    n=$((n + 1))
    if $cxx -x c++ -Wall -Wextra -Werror -fsyntax-only $flags \
         -I"$builddir/include" -I"$srcdir/include" "$tmp/t.c" 2> "$tmp/err"; then
      echo "ok $n - $name compiles alone as C++ ($mode)"
    else
      echo "not ok $n - $name compiles alone as C++ ($mode)"
      sed 's/^/# /' "$tmp/err"
      status=1
    fi
  done
done
echo "1..$n"
exit $status

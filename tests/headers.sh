#!/bin/sh
# headers.sh: every public header compiles on its own, as C11 with every
# warning on and as C++ (when a C++ compiler is there), so that a program
# can include any one of them first: with the stable declarations alone
# and with the experimental ones too (KEVO_EXPERIMENTAL, kevo-api(7)); and
# the plugin ABI header declares no library function, in either mode.
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
# A plugin includes <kevo/operator.h> alone and never links the library, so
# that header (and what it includes) declares no library function, stable
# or experimental: nothing defines KEVO_API, and no kevo_ name is declared
# as a function (function pointer members and types are written
# (*name)(...)).
printf '#include <kevo/operator.h>\n#ifdef KEVO_API\n#error KEVO_API is defined\n#endif\n' > "$tmp/plugin.c"
for mode in stable experimental; do
  flags=
  [ $mode = experimental ] && flags=-DKEVO_EXPERIMENTAL
  n=$((n + 1))
  if $cc -std=c11 -Wall -Wextra -Wpedantic -Werror -fsyntax-only $flags \
       -I"$builddir/include" -I"$srcdir/include" "$tmp/plugin.c" 2> "$tmp/err"; then
    echo "ok $n - kevo/operator.h does not define KEVO_API ($mode)"
  else
    echo "not ok $n - kevo/operator.h does not define KEVO_API ($mode)"
    sed 's/^/# /' "$tmp/err"
    status=1
  fi
  n=$((n + 1))
  if $cc -std=c11 -E -P $flags -I"$builddir/include" -I"$srcdir/include" \
       "$tmp/plugin.c" > "$tmp/plugin.i" 2> "$tmp/err"; then
    tr '\n' ' ' < "$tmp/plugin.i" |
      grep -oE '(^|[^*[:alnum:]_])kevo_[[:alnum:]_]*[[:space:]]*\([[:space:]]*[^*[:space:]]' > "$tmp/fns"
    if [ -s "$tmp/fns" ]; then
      echo "not ok $n - kevo/operator.h declares no kevo_ function ($mode)"
      sed 's/^/# declared: /' "$tmp/fns"
      status=1
    else
      echo "ok $n - kevo/operator.h declares no kevo_ function ($mode)"
    fi
  else
    echo "not ok $n - kevo/operator.h declares no kevo_ function ($mode)"
    sed 's/^/# /' "$tmp/err"
    status=1
  fi
done
echo "1..$n"
exit $status

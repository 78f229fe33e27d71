#!/bin/sh
# format.sh: every C source and header of kevo follows .clang-format.
srcdir=${KEVO_SRCDIR:-.}
cf=${CLANG_FORMAT:-$(command -v clang-format)}
if [ -z "$cf" ] || [ ! -x "$cf" ]; then
  echo "1..0 # SKIP clang-format not found (Debian package clang-format)"
  exit 77
fi
n=0
status=0
for f in $(cd "$srcdir" && find include lib tests examples bench operators fitness \
             -name '*.[ch]' 2>/dev/null | sort); do
  # Generated from a .in template (include/kevo/version.h in an in-tree
  # build): the template is what people edit.
  [ -f "$srcdir/$f.in" ] && continue
  n=$((n + 1))
  if out=$(cd "$srcdir" && "$cf" --dry-run --Werror "$f" 2>&1); then
    echo "ok $n - $f"
  else
    echo "not ok $n - $f (run: clang-format -i $f)"
    echo "$out" | head -n 20 | sed 's/^/# /'
    status=1
  fi
done
echo "1..$n"
exit $status

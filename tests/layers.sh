#!/bin/sh
# layers.sh: each layer includes only the layers below it, as lib/README.md
# draws them. A file's layer is its folder; an include of another layer's
# header names that folder ("model/task_private.h"), so the check reads
# the include lines. Plugins and the examples see only the public headers.
srcdir=${KEVO_SRCDIR:-.}

# layer: the layers it may include
allowed() {
  case $1 in
    lib/core) echo "" ;;
    lib/model) echo "core" ;;
    lib/proc) echo "core" ;;
    fitness) echo "core model" ;;
    lib/eval) echo "core model proc fitness" ;;
    lib/archive) echo "core model" ;;
    lib/prompts) echo "core model" ;;
    lib/operators) echo "core model proc prompts" ;;
    lib/run) echo "core" ;;
    lib/farm) echo "core proc" ;;
    lib/search) echo "core model proc fitness eval archive prompts operators run farm" ;;
    lib/export) echo "core model" ;;
    worker) echo "core model proc" ;;
    operators/*|examples) echo "" ;;
    *) echo "?" ;;
  esac
}

n=0
status=0
cd "$srcdir" || exit 1
for dir in lib/core lib/model lib/proc fitness lib/eval lib/archive \
           lib/prompts lib/operators lib/run lib/farm lib/search lib/export worker \
           operators/* examples; do
  [ -d "$dir" ] || continue
  ok=$(allowed "$dir")
  bad=""
  for f in "$dir"/*.c "$dir"/*.h; do
    [ -f "$f" ] || continue
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
      case $inc in
        */*) ;;
        *) continue ;;
      esac
      top=${inc%%/*}
      found=no
      for l in $ok; do
        [ "$top" = "$l" ] && found=yes
      done
      [ $found = yes ] || bad="$bad $f:$inc"
    done
  done
  n=$((n + 1))
  if [ -z "$bad" ]; then
    echo "ok $n - $dir includes only: ${ok:-no other layer}"
  else
    echo "not ok $n - $dir includes only: ${ok:-no other layer}"
    for b in $bad; do echo "# $b"; done
    status=1
  fi
done
echo "1..$n"
exit $status

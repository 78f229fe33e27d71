#!/bin/sh
# gpu-strong-replies.sh: the strong-reply corpus (tests/data/strong-replies)
# served to llm searches on the GPU by bench/strong-replies.sh, for every
# task of the corpus: the parser, the kernel contract, the tolerance, the
# gate and the final pick together, as real use meets them. Each task is
# one TAP line: its search ended with the fittest candidate that passed
# the gate as champion, and RUN/llm holds a request and a reply file for
# every model call (the script's verdict). Skips (77) without a GPU.
#   KEVO_BUILDDIR=BUILD KEVO_SRCDIR=SRC sh tests/gpu/gpu-strong-replies.sh
b=${KEVO_BUILDDIR:-.}
s=${KEVO_SRCDIR:-.}
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "^GPU" ||
  { echo "1..0 # SKIP no GPU"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 77; }
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
tasks=$(ls "$s/tests/data/strong-replies")
n=0
echo "1..$(echo $tasks | wc -w)"
for t in $tasks; do
  n=$((n + 1))
  if KEVO_SRCDIR=$s KEVO_BUILDDIR=$b sh "$s/bench/strong-replies.sh" "$out/$t" "$t" \
       > "$out/$t.txt" 2>&1; then
    echo "ok $n - $t: the champion is the fittest gated candidate, every exchange in RUN/llm"
  else
    echo "not ok $n - $t"
  fi
  grep -v '^kevo: \[' "$out/$t.txt" | sed 's/^/# /' | tail -n 30
done

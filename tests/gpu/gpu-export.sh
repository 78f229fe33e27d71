#!/bin/sh
# gpu-export.sh: kevo export end to end on the GPU. For saxpy, softmax and
# reduce_sum (two kernels and a scratch buffer): a short real search
# (kevo search --evals 20, params only), kevo export of its champion, the
# C package built with its Makefile (nvcc) and the PyTorch package built
# by its first call; both are called on fresh inputs at a training shape,
# the held-out shapes and a shape of neither set, and compared with the
# task's reference under its tolerance (export-check.py). Skips (77)
# without a GPU, nvcc or PyTorch with CUDA.
#   KEVO_BUILDDIR=BUILD KEVO_SRCDIR=SRC sh tests/gpu/gpu-export.sh
# KEVO_EXPORT_TMP=DIR KEVO_EXPORT_KEEP=1 keeps the runs and packages in DIR
# (for bench/export-timing.py).
b=${KEVO_BUILDDIR:-.}
s=${KEVO_SRCDIR:-.}
KEVO_OPERATOR_PATH=${KEVO_OPERATOR_PATH:-$b/operators/.libs}
export KEVO_OPERATOR_PATH
skip() { echo "1..0 # SKIP $*"; exit 77; }
command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q "^GPU" ||
  skip "no GPU"
NVCC=${NVCC:-}
if [ -z "$NVCC" ]; then
  if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc
  elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
  else skip "no nvcc"; fi
fi
PYTHON=${PYTHON:-python3}
"$PYTHON" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
  >/dev/null 2>&1 || skip "no PyTorch with CUDA ($PYTHON)"
# PyTorch's extension build finds nvcc through CUDA_HOME or PATH.
PATH=$(dirname "$(command -v "$NVCC")"):$PATH
export PATH
tmp=${KEVO_EXPORT_TMP:-$(mktemp -d)} && mkdir -p "$tmp" || exit 1
[ -n "$KEVO_EXPORT_KEEP" ] || trap 'rm -rf "$tmp"' EXIT
TORCH_EXTENSIONS_DIR=$tmp/torch-ext
export TORCH_EXTENSIONS_DIR

n=0; st=0
t() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; st=1; fi
}
show() { sed "s/^/# /" "$1" | tail -n "${2:-40}"; }

for task in saxpy softmax reduce_sum; do
  run=$tmp/$task-run
  pkg=$tmp/$task-pkg
  "$b/examples/kevo" search "$s/examples/tasks/$task.json" -o "$run" \
    --evals 20 --no-llm > "$tmp/$task-search.log" 2>&1
  rc=$?; [ $rc -eq 0 ] || show "$tmp/$task-search.log"
  t $rc "$task: kevo search --evals 20 finds a champion"
  [ $rc -eq 0 ] || continue
  "$b/examples/kevo" export "$run" -o "$pkg" --name "$task" \
    > "$tmp/$task-export.log" 2>&1
  rc=$?; show "$tmp/$task-export.log" 5
  t $rc "$task: kevo export writes the package"
  [ $rc -eq 0 ] || continue
  (cd "$pkg" && make -j4 NVCC="$NVCC") > "$tmp/$task-make.log" 2>&1
  rc=$?; [ $rc -eq 0 ] || show "$tmp/$task-make.log"
  t $rc "$task: make builds lib$task.so with nvcc"
  [ $rc -eq 0 ] || continue
  "$PYTHON" "$s/tests/gpu/export-check.py" --task "$s/examples/tasks/$task.json" \
    --pkg "$pkg" --name "$task" > "$tmp/$task-check.log" 2>&1
  rc=$?; show "$tmp/$task-check.log" 60
  t $rc "$task: the C and PyTorch functions match the reference"
done
echo "1..$n"
exit $st

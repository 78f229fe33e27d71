#!/bin/sh
# timing-vs-ncu.sh: compares kevo's timing of one kernel with Nsight
# Compute's gpu__time_duration.sum of the same launches.
#
# Usage (from the build directory, on the GPU machine):
#   sh bench/timing-vs-ncu.sh [RUNS [TASK [KERNEL]]]
# It runs bench-timing (RUNS evaluations, default 30, of the seed of TASK,
# default softmax, at its first training shape; KERNEL is the seed's kernel
# name, default TASK), which also writes that one-shape task, and then `kevo eval`
# of the same kernel on the same task under ncu, which records the
# kernel's duration for 30 launches after the two correctness runs and the
# three warm-ups (the time limits are raised: ncu replays every launch).
# ncu runs with --clock-control none (the GPU's own clocks, as kevo sees
# them) and --cache-control all (caches flushed before each launch, as
# kevo flushes L2 between repetitions); NCU_CONTROL replaces both flags.
# It prints both medians and their ratio.
set -e
runs=${1:-30}
task=${2:-softmax}
kernel=${3:-$task}
src=${KEVO_SRCDIR:-$(dirname "$0")/..}
ncu=${NCU:-ncu}
out=${TMPDIR:-/tmp}/kevo-timing-$$
mkdir -p "$out"
trap 'rm -rf "$out"' EXIT
./bench/bench-timing --runs "$runs" --out "$out/kevo.txt" \
  --task-out "$out/task.json" "$src/examples/tasks/$task.json"
# NCU_CONTROL overrides the clock and cache control, to see what they do.
control=${NCU_CONTROL:---clock-control none --cache-control all}
# shellcheck disable=SC2086
"$ncu" --target-processes all $control \
  --metrics gpu__time_duration.sum -k regex:"^$kernel\$" \
  --launch-skip 5 --launch-count 30 --csv \
  ./examples/kevo eval --set min_reps=40 --set max_reps=40 \
  --set time_cap_ms=600000 --set run_timeout_ms=600000 \
  "$out/task.json" "$src/examples/tasks/${task}_seed.cu" \
  > "$out/ncu.csv" 2> "$out/ncu.err" || { cat "$out/ncu.err" >&2; exit 1; }
awk -F'","' '/gpu__time_duration.sum/ {
    v = $NF; gsub(/[",]/, "", v); unit = $(NF-1); gsub(/"/, "", unit);
    if (unit == "nsecond" || unit == "ns") v = v / 1000;
    else if (unit == "msecond" || unit == "ms") v = v * 1000;
    print v }' "$out/ncu.csv" | sort -n > "$out/ncu.txt"
n=$(wc -l < "$out/ncu.txt")
if [ "$n" -eq 0 ]; then
  echo "timing-vs-ncu: ncu recorded no launch of the kernel" >&2
  head -20 "$out/ncu.csv" >&2
  exit 1
fi
ncu_median=$(awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}' "$out/ncu.txt")
kevo_median=$(sort -g "$out/kevo.txt" | awk '{a[NR] = $1 * 1e6} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
echo "ncu: $n launches, median gpu__time_duration.sum $ncu_median us"
echo "kevo: median of $runs evaluations $kevo_median us"
awk -v k="$kevo_median" -v n="$ncu_median" 'BEGIN {
    printf "kevo / ncu = %.4f (%+.2f%%)\n", k / n, (k / n - 1) * 100 }'

#!/usr/bin/env bash
# gpuscope import and analyze of an nvidia-smi --query-gpu CSV log (docs/performance.md,
# "Importing logs"): generates SIZE bytes of a realistic 8-GPU, 100 ms log (gen_smi_csv.py),
# then runs `gpuscope import log.csv -o out.db` and `gpuscope analyze log.csv` under
# /usr/bin/time -v, RUNS times each, and prints the medians: wall s, peak RSS MB, rows/s, MB/s.
# The generated log and databases are deleted at the end.
#
# usage: bench_logs.sh GPUSCOPE
# env:   SIZE (1G; bytes or K/M/G, powers of 1000), RUNS (3), GPUS (8), INTERVAL_MS (100),
#        SKIP_ANALYZE=1, BENCH_LOGS_DIR (a scratch folder; default mktemp under $TMPDIR)
set -euo pipefail

GPUSCOPE=$(realpath "${1:?usage: bench_logs.sh GPUSCOPE}")
SIZE=${SIZE:-1G}
RUNS=${RUNS:-3}
GPUS=${GPUS:-8}
INTERVAL_MS=${INTERVAL_MS:-100}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${BENCH_LOGS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-bench-logs.XXXXXX")}
mkdir -p "$WORK"
trap 'rm -f "$WORK/log.csv" "$WORK/out.db" "$WORK"/time.*; rmdir "$WORK" 2>/dev/null || true' EXIT

for tool in python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench_logs: $tool is missing" >&2; exit 1; }
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

LOG="$WORK/log.csv"
echo "generating $SIZE ($GPUS GPUs, ${INTERVAL_MS} ms) into $LOG" >&2
python3 "$HERE/gen_smi_csv.py" "$LOG" "$SIZE" --gpus "$GPUS" --interval-ms "$INTERVAL_MS"
BYTES=$(stat -c %s "$LOG")
ROWS=$(($(wc -l <"$LOG") - 1))

# Runs "$@" RUNS times under /usr/bin/time -v; prints "wall_s rss_mb" medians.
measure() {
  local walls=() rsss=() i
  for ((i = 0; i < RUNS; i++)); do
    rm -f "$WORK/out.db"
    /usr/bin/time -v -o "$WORK/time.$i" "$@" >/dev/null 2>"$WORK/time.err" ||
      { cat "$WORK/time.err" >&2; exit 1; }
    walls+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0;
               for (j = 1; j <= n; j++) s = s * 60 + p[j]; print s }' "$WORK/time.$i")")
    rsss+=("$(awk -F': ' '/Maximum resident set size/ { printf "%.1f\n", $2 / 1024 }' "$WORK/time.$i")")
  done
  echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${rsss[@]}" | median)"
}

report() {  # NAME WALL RSS
  awk -v name="$1" -v wall="$2" -v rss="$3" -v rows="$ROWS" -v bytes="$BYTES" -v runs="$RUNS" 'BEGIN {
    printf "%-8s %8.2f s  %7.1f MB peak RSS  %10.0f rows/s  %7.1f MB/s  (median of %d)\n",
           name, wall, rss, rows / wall, bytes / 1e6 / wall, runs }'
}

echo "log: $(awk -v b="$BYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }'), $ROWS rows"
read -r wall rss < <(measure "$GPUSCOPE" import "$LOG" -o "$WORK/out.db" -f)
report import "$wall" "$rss"
if [[ ${SKIP_ANALYZE:-0} != 1 ]]; then
  read -r wall rss < <(measure "$GPUSCOPE" analyze "$LOG")
  report analyze "$wall" "$rss"
fi

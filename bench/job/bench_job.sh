#!/usr/bin/env bash
# gpuscope job against real servers on loopback (docs/performance.md, "gpuscope job"):
#   a. 64 GPUs x 1 h at a 15 s scrape, backfilled into Prometheus with promtool;
#   b. 1024 GPUs x 24 h at 15 s imported into VictoriaMetrics, with --summary and without
#      (which summarises by itself above MonitoringOptions::max_raw_points).
# Prints wall time and peak RSS per run (median of RUNS), and the HTTP requests and answer
# bytes each run cost, read from the server's own /metrics before and after.
#
# usage: bench_job.sh GPUSCOPE [a] [b]       (default: both)
# env:   RUNS (5), B_METRICS (core|full, default core), B_HOSTS (128), KEEP=1 keeps the data,
#        BENCH_JOB_DIR (a scratch folder; default mktemp under $TMPDIR)
set -euo pipefail

GPUSCOPE=$(realpath "${1:?usage: bench_job.sh GPUSCOPE [a] [b]}")
shift
PARTS=("$@")
[[ ${#PARTS[@]} -eq 0 ]] && PARTS=(a b)
RUNS=${RUNS:-5}
B_METRICS=${B_METRICS:-core}
B_HOSTS=${B_HOSTS:-128}
HERE=$(cd "$(dirname "$0")" && pwd)
GEN="$HERE/gen_job_data.py"
WORK=${BENCH_JOB_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-bench-job.XXXXXX")}
mkdir -p "$WORK"
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

for tool in prometheus promtool victoria-metrics python3 curl /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench_job: $tool is missing" >&2; exit 1; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ready() {  # URL
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "bench_job: $1 never answered" >&2
  exit 1
}

hosts_list() {  # N -> gpu0001,...,gpuN
  local out=() i
  for ((i = 1; i <= $1; i++)); do out+=("$(printf 'gpu%04d' "$i")"); done
  (IFS=,; echo "${out[*]}")
}

# The sum of a server's counter lines matching a regex (its /metrics).
metric_sum() {  # URL REGEX
  curl -fsS "$1/metrics" | awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $NF } END { printf "%.0f\n", s }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Times `gpuscope job ... ARGS` RUNS times; prints each run and the medians.
time_job() {  # LABEL URL REQ_REGEX BYTES_REGEX ARGS...
  local label=$1 url=$2 req_re=$3 bytes_re=$4
  shift 4
  local walls=() rss=() r0 r1 b0 b1
  echo "== $label"
  echo "   gpuscope job $* --prometheus $url --json > /dev/null" | sed -E 's/(gpu0001),[^ ]*,(gpu[0-9]+) /\1,...,\2 /' 
  for ((i = 1; i <= RUNS; i++)); do
    r0=$(metric_sum "$url" "$req_re")
    [[ -n $bytes_re ]] && b0=$(metric_sum "$url" "$bytes_re")
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$GPUSCOPE" job "$@" --prometheus "$url" --json \
      >/dev/null 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; exit 1; }
    r1=$(metric_sum "$url" "$req_re")
    read -r wall kb <"$WORK/time"
    walls+=("$wall")
    rss+=("$kb")
    local bytes="n/a"
    if [[ -n $bytes_re ]]; then b1=$(metric_sum "$url" "$bytes_re"); bytes=$((b1 - b0)); fi
    printf '   run %d: %6.2f s  peak RSS %4d MB  %d API requests  %s answer bytes\n' \
      "$i" "$wall" $((kb / 1024)) $((r1 - r0)) "$bytes"
  done
  grep '^gpuscope: ' "$WORK/stderr" | sed -E 's/^/   /; s/(gpu0001),[^ ]*,(gpu[0-9]+)/\1,...,\2/g' | head -5
  printf '   median: %.2f s, peak RSS %d MB (of %d runs)\n' \
    "$(printf '%s\n' "${walls[@]}" | median)" \
    $(($(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024)) "$RUNS"
}

# Data well in the past (Prometheus' head only takes the last ~2 h), on whole hours.
NOW_H=$((($(date +%s) / 3600) * 3600))

part_a() {
  local end=$((NOW_H - 6 * 3600)) start port data url t0
  start=$((end - 3600))
  data="$WORK/prometheus"
  echo "## a. Prometheus, 8 hosts x 8 GPUs x 1 h at 15 s (every family serve exports)"
  t0=$(date +%s.%N)
  python3 "$GEN" openmetrics --hosts 8 --start "$start" --points 240 --metrics full >"$WORK/a.om"
  promtool tsdb create-blocks-from openmetrics "$WORK/a.om" "$data" >/dev/null
  rm -f "$WORK/a.om"
  printf 'global: {}\nscrape_configs: []\n' >"$WORK/prometheus.yml"
  port=$(free_port)
  prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$data" \
    --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$port" \
    >"$WORK/prometheus.log" 2>&1 &
  PIDS+=($!)
  url="http://127.0.0.1:$port"
  wait_ready "$url/-/ready"
  printf '   data generated, backfilled and served in %.1f s\n' "$(echo "$(date +%s.%N) - $t0" | bc)"
  time_job "a. gpuscope job, 64 GPUs x 1 h, Prometheus 2.42" "$url" \
    '^prometheus_http_requests_total[{].*handler="/api/v1/' \
    '^prometheus_http_response_size_bytes_sum[{]handler="/api/v1/' \
    --hosts "$(hosts_list 8)" --from "$start" --to "$end"
}

part_b() {
  local end=$((NOW_H - 2 * 86400)) start port data url t0 t1 samples
  start=$((end - 86400))
  data="$WORK/victoria-metrics"
  port=$(free_port)
  echo "## b. VictoriaMetrics, $B_HOSTS hosts x 8 GPUs x 24 h at 15 s (metrics: $B_METRICS)"
  victoria-metrics -storageDataPath="$data" -retentionPeriod=100y -search.latencyOffset=0s \
    -httpListenAddr="127.0.0.1:$port" >"$WORK/victoria-metrics.log" 2>&1 &
  PIDS+=($!)
  url="http://127.0.0.1:$port"
  wait_ready "$url/health"
  t0=$(date +%s.%N)
  python3 "$GEN" vmimport --hosts "$B_HOSTS" --start "$start" --points 5760 --metrics "$B_METRICS" \
    --url "$url"
  curl -fsS "$url/internal/force_flush" >/dev/null
  t1=$(date +%s.%N)
  samples=$(curl -fsS "$url/api/v1/query" --data-urlencode "query=count(count_over_time({__name__=~\"gpuscope_.*\"}[1d]))" \
    --data-urlencode "time=$end" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["result"][0]["value"][1])')
  printf '   %s series imported (5760 samples each) in %.1f s\n' "$samples" "$(echo "$t1 - $t0" | bc)"
  local args=(--hosts "$(hosts_list "$B_HOSTS")" --from "$start" --to "$end")
  time_job "b. gpuscope job --summary, $((B_HOSTS * 8)) GPUs x 24 h, VictoriaMetrics 1.79" "$url" \
    '^vm_http_requests_total[{]path="/api/v1/' '' "${args[@]}" --summary
  time_job "b. gpuscope job (no --summary), $((B_HOSTS * 8)) GPUs x 24 h, VictoriaMetrics 1.79" "$url" \
    '^vm_http_requests_total[{]path="/api/v1/' '' "${args[@]}"
}

echo "# gpuscope job benchmark: $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${PARTS[@]}"; do "part_$p"; done

#!/usr/bin/env bash
# shellcheck disable=SC2317  # fresh_db and after_run are called through time_runs
# Every job of the site against a real VictoriaMetrics on loopback (docs/performance.md, "Every
# job of the site"):
#   update: a day of NODES nodes x 4 GPUs at a 30 s scrape (gen_fleet_data.py: ~20,000 SLURM jobs
#           for 2,000 nodes, gpuscope serve's series with slurm_job_id) imported into
#           VictoriaMetrics; `gpuscope jobs --update --db FILE` over the day, a fresh database
#           each run, sacct replaced by a script printing the day's jobs (GPUSCOPE_SACCT);
#   year:   a year of such a site as an accounting database (gen_accounting_db.py, JOBS jobs),
#           `gpuscope usage --by user|account|day|week` and `gpuscope jobs --limit 50` over it.
# Prints wall time and peak RSS per run (median of RUNS), the requests each update cost and the
# jobs it added, and the load average before each run (other work on the machine skews them).
#
# usage: bench_fleet.sh GPUSCOPE [update] [year]     (default: both)
# env:   RUNS (3), NODES (2000), JOBS (7000000), KEEP=1 keeps the data (and reuses it when
#        BENCH_FLEET_DIR names the same folder again), BENCH_FLEET_DIR (scratch folder; default
#        mktemp under $TMPDIR), HOURS (24: the update asks for the jobs that ended in the day's
#        first HOURS hours), VM_FLAGS (victoria-metrics flags; default none: the stock
#        -search.maxQueryLen of 16 KB takes a batch of 500 short job ids), UPDATE_FLAGS (extra
#        flags of the update, e.g. --batch 2000)
set -euo pipefail

GPUSCOPE=$(realpath "${1:?usage: bench_fleet.sh GPUSCOPE [update] [year]}")
shift
PARTS=("$@")
[[ ${#PARTS[@]} -eq 0 ]] && PARTS=(update year)
RUNS=${RUNS:-3}
NODES=${NODES:-2000}
JOBS=${JOBS:-7000000}
HOURS=${HOURS:-24}
VM_FLAGS=${VM_FLAGS-}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${BENCH_FLEET_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-bench-fleet.XXXXXX")}
mkdir -p "$WORK"
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT

for tool in victoria-metrics python3 curl sqlite3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench_fleet: $tool is missing" >&2; exit 1; }
done

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_ready() {  # URL
  for _ in $(seq 1 300); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.2
  done
  echo "bench_fleet: $1 never answered" >&2
  exit 1
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }

# Waits up to QUIET_S seconds (300) for the 1-minute load average to fall under 1.5 (other work
# skews runs); the load is printed beside each run either way.
quiet() {
  for _ in $(seq 1 $((${QUIET_S:-300} / 5))); do
    awk '{ exit !($1 < 1.5) }' /proc/loadavg && return 0
    sleep 5
  done
}

# The sum of VictoriaMetrics' counter lines matching a regex (its /metrics).
metric_sum() {  # URL REGEX
  curl -fsS "$1/metrics" | awk -v re="$2" '$0 !~ /^#/ && $1 ~ re { s += $NF } END { printf "%.0f\n", s }'
}

# Runs "$@" under /usr/bin/time RUNS times; prints each run and the medians.
time_runs() {  # LABEL PREPARE_FUNCTION COMMAND...
  local label=$1 prepare=$2
  shift 2
  local walls=() rss=() kb wall
  echo "== $label"
  for ((i = 1; i <= RUNS; i++)); do
    $prepare
    quiet
    local l0
    l0=$(load)
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$@" >"$WORK/stdout" 2>"$WORK/stderr" ||
      { cat "$WORK/stderr" >&2; exit 1; }
    read -r wall kb <"$WORK/time"
    walls+=("$wall")
    rss+=("$kb")
    printf '   run %d: %6.2f s  peak RSS %4d MB  (load %s)%s\n' "$i" "$wall" $((kb / 1024)) "$l0" \
      "$(after_run)"
  done
  printf '   median: %.2f s, peak RSS %d MB (of %d runs)\n' \
    "$(printf '%s\n' "${walls[@]}" | median)" \
    $(($(printf '%s\n' "${rss[@]}" | median | cut -d. -f1) / 1024)) "$RUNS"
}

after_run() { :; }

part_update() {
  # A day well in the past (whole UTC days), so that --settle and the server's latency do not
  # matter; the same day on a rerun with KEEP=1.
  local day port url t0 t1 data="$WORK/victoria-metrics"
  if [[ -f $WORK/day ]]; then day=$(cat "$WORK/day"); else
    day=$((($(date +%s) / 86400 - 3) * 86400))
  fi
  port=$(free_port)
  url="http://127.0.0.1:$port"
  echo "## update: a day of $NODES nodes x 4 GPUs at 30 s, VictoriaMetrics $(dpkg-query -W -f='${Version}' victoria-metrics 2>/dev/null || echo "(version unknown)")"
  # shellcheck disable=SC2086
  victoria-metrics -storageDataPath="$data" -retentionPeriod=100y -search.latencyOffset=0s \
    -httpListenAddr="127.0.0.1:$port" -loggerLevel=ERROR $VM_FLAGS >"$WORK/vm.log" 2>&1 &
  PIDS+=($!)
  local vm_pid=$!
  wait_ready "$url/health"
  python3 "$HERE/gen_fleet_data.py" summary --nodes "$NODES" --start "$day" | sed 's/^/   /'
  if [[ ! -f $WORK/imported ]]; then
    t0=$(date +%s.%N)
    python3 "$HERE/gen_fleet_data.py" vmimport --nodes "$NODES" --start "$day" --url "$url" \
      --progress 2>&1 | awk 'NR % 5 == 0 || !/nodes sent/' | sed 's/^ *//; s/^/   /'
    curl -fsS "$url/internal/force_flush" >/dev/null
    t1=$(date +%s.%N)
    printf '   generated and imported in %.0f s\n' "$(echo "$t1 - $t0" | bc)"
    echo "$day" >"$WORK/day"
    touch "$WORK/imported"
  fi
  python3 "$HERE/gen_fleet_data.py" sacct --nodes "$NODES" --start "$day" >"$WORK/sacct.txt"
  cat >"$WORK/sacct" <<EOF
#!/bin/sh
# sacct of the bench's day: the jobs of gen_fleet_data.py, whatever the arguments
exec cat "$WORK/sacct.txt"
EOF
  chmod +x "$WORK/sacct"
  printf '   %s series in VictoriaMetrics (%s MB on disk)\n' \
    "$(curl -fsS "$url/api/v1/series/count" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0])')" \
    "$(du -sm "$data" | cut -f1)"
  local from to
  from=$(date -u -d "@$day" +%Y-%m-%dT%H:%M:%SZ)
  to=$(date -u -d "@$((day + HOURS * 3600))" +%Y-%m-%dT%H:%M:%SZ)
  echo "   the update: the jobs that ended $from to $to; victoria-metrics $VM_FLAGS"
  # shellcheck disable=SC2317  # called by time_runs
  fresh_db() { rm -f "$WORK/day.db" "$WORK/day.db-wal" "$WORK/day.db-shm"; R0=$(metric_sum "$url" '^vm_http_requests_total[{]path="/api/v1/query"'); }
  after_run() {
    local r1 vm_rss
    r1=$(metric_sum "$url" '^vm_http_requests_total[{]path="/api/v1/query"')
    vm_rss=$(awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$vm_pid/status")
    printf '; %s; %d queries; VictoriaMetrics peak RSS %d MB' \
      "$(sed -nE 's/.*(added [0-9]+ jobs).*\(([0-9]+ without figures)\).*; ([0-9]+ requests).*/\1, \2, \3/p' "$WORK/stderr")" \
      $((r1 - R0)) "$vm_rss"
  }
  export GPUSCOPE_SACCT="$WORK/sacct"
  # shellcheck disable=SC2086
  time_runs "gpuscope jobs --update over the day (fresh database each run)" fresh_db \
    "$GPUSCOPE" jobs --update --db "$WORK/day.db" --from "$from" --to "$to" --settle 0 \
    --prometheus "$url" ${UPDATE_FLAGS:-}
  after_run() { :; }
  echo "   $(sed -n 's/^gpuscope: //p' "$WORK/stderr" | head -3)"
  sqlite3 -readonly "$WORK/day.db" "SELECT printf('   database: %d jobs, %d with figures (source tsdb), %d without; %d GPU rows; %d flagged idle, %d straggler', count(*), sum(source = 'tsdb'), sum(source = 'none'), (SELECT count(*) FROM job_gpus), sum(flags LIKE '%idle%'), sum(flags LIKE '%straggler%')) FROM jobs"
  local with
  with=$(sqlite3 -readonly "$WORK/day.db" "SELECT count(*) FROM jobs WHERE source = 'tsdb' AND util_pct IS NOT NULL")
  local want
  want=$(sqlite3 -readonly "$WORK/day.db" "SELECT count(*) FROM jobs")
  if ((with < want * 99 / 100)); then
    echo "bench_fleet: only $with of the $want jobs added have figures" >&2
    exit 1
  fi
  kill "$vm_pid"
  wait "$vm_pid" 2>/dev/null || true
}

part_year() {
  local db="$WORK/year.db" to from t0
  echo "## year: an accounting database of $JOBS jobs over the year up to now"
  if [[ ! -f $db ]]; then
    t0=$(date +%s.%N)
    python3 "$HERE/gen_accounting_db.py" --jobs "$JOBS" --out "$db"
    printf '   written in %.0f s, %s MB\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$(du -sm "$db" | cut -f1)"
  fi
  sqlite3 -readonly "$db" "SELECT printf('   %d jobs, %d usage_days rows', (SELECT count(*) FROM jobs), (SELECT count(*) FROM usage_days))"
  to=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  from=$(date -u -d '365 days ago' +%Y-%m-%dT%H:%M:%SZ)
  for by in user account day week; do
    time_runs "gpuscope usage --by $by over the year" : \
      "$GPUSCOPE" usage --db "$db" --from "$from" --to "$to" --by "$by"
  done
  echo "   $(head -2 "$WORK/stdout" | tail -1 | cut -c1-100)"
  time_runs "gpuscope jobs --limit 50 over the year" : \
    "$GPUSCOPE" jobs --db "$db" --from "$from" --to "$to" --limit 50
  time_runs "gpuscope jobs --user user042 over the year (its 50 most idle)" : \
    "$GPUSCOPE" jobs --db "$db" --from "$from" --to "$to" --user user042 --limit 50
}

echo "# gpuscope fleet benchmark: $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p')), load $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${PARTS[@]}"; do "part_$p"; done

#!/usr/bin/env bash
# One cycle of gpuscope guard over a site's running jobs against a real VictoriaMetrics on
# loopback (docs/performance.md, "guard"): the last HOURS hours of NODES nodes x 4 H100s at a
# 30 s scrape (bench/fleet/gen_fleet_data.py: gpuscope serve's series labelled with the jobs),
# the jobs running at the end as squeue --json prints them (about 5,000 for 3,400 nodes), the
# nodes as sinfo prints them; squeue, sinfo, scontrol and scancel are scripts. Each run: a first
# cycle on a fresh state (every job's window from its start, or the longest step back) and a
# second one just after (the windows since the first). Prints wall time, peak RSS, the cycle's
# summary line and the load average before it.
#
# usage: bench_guard.sh GPUSCOPE
# env:   RUNS (3), NODES (3400), HOURS (2), KEEP=1 keeps the data (and reuses it when
#        BENCH_GUARD_DIR names the same folder again), BENCH_GUARD_DIR (scratch folder)
set -euo pipefail

GPUSCOPE=$(realpath "${1:?usage: bench_guard.sh GPUSCOPE}")
RUNS=${RUNS:-3}
NODES=${NODES:-3400}
HOURS=${HOURS:-2}
HERE=$(cd "$(dirname "$0")" && pwd)
GEN=$HERE/../fleet/gen_fleet_data.py
WORK=${BENCH_GUARD_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gpuscope-bench-guard.XXXXXX")}
mkdir -p "$WORK"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap cleanup EXIT
for tool in victoria-metrics python3 curl /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench_guard: $tool is missing" >&2; exit 1; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

port=$(free_port)
victoria-metrics -storageDataPath="$WORK/vm" -httpListenAddr="127.0.0.1:$port" \
  -search.latencyOffset=0s -loggerLevel=ERROR >"$WORK/vm.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null && break; sleep 0.2; done
vm=http://127.0.0.1:$port

# The generator's "day" is the last HOURS hours and the next 10 minutes: the series go on past
# the cycles, as a running exporter's do.
if [[ ! -f $WORK/start ]]; then
  echo $(( $(date +%s) / 60 * 60 - HOURS * 3600 + 600 )) >"$WORK/start"
  start=$(cat "$WORK/start")
  echo "bench_guard: importing $NODES nodes x $HOURS h into VictoriaMetrics"
  /usr/bin/time -f "bench_guard: imported in %e s" \
    python3 "$GEN" vmimport --nodes "$NODES" --start "$start" --hours "$HOURS" --url "$vm"
  curl -fsS "$vm/internal/force_flush" >/dev/null || true
fi
start=$(cat "$WORK/start")
python3 "$GEN" squeue --nodes "$NODES" --start "$start" --hours "$HOURS" >"$WORK/squeue.json"
python3 "$GEN" sinfo --nodes "$NODES" --start "$start" --hours "$HOURS" >"$WORK/sinfo.txt"
printf '#!/bin/sh\ncat %s\n' "$WORK/squeue.json" >"$WORK/squeue"
printf '#!/bin/sh\ncat %s\n' "$WORK/sinfo.txt" >"$WORK/sinfo"
printf '#!/bin/sh\necho "$0 $*" >>%s\n' "$WORK/actions.log" >"$WORK/scontrol"
cp "$WORK/scontrol" "$WORK/scancel"
chmod 755 "$WORK/squeue" "$WORK/sinfo" "$WORK/scontrol" "$WORK/scancel"
export GPUSCOPE_SQUEUE=$WORK/squeue GPUSCOPE_SINFO=$WORK/sinfo GPUSCOPE_SCONTROL=$WORK/scontrol \
  GPUSCOPE_SCANCEL=$WORK/scancel
jobs=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["jobs"]))' "$WORK/squeue.json")
echo "bench_guard: $jobs running jobs on $NODES nodes; VictoriaMetrics at $vm"
cat >"$WORK/rules.yaml" <<YAML
enforce: true
cluster: bench
interval: 5m
sample_interval: 30s
max_cancels_per_cycle: 100000
max_drains_per_cycle: 100
health: {max_drained_share: 0.1}
notify: {stdout: true, digest_hour: -1}
YAML

cycle() {  # cycle STATE NAME
  local load
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$GPUSCOPE" guard --rules "$WORK/rules.yaml" --once \
    --prometheus "$vm" --state "$1" >"$WORK/$2.jsonl" 2>"$WORK/$2.err" || true
  read -r wall rss <"$WORK/time"
  printf 'bench_guard: %-6s %6.2f s  %4d MB  load %s  %s\n' "$2" "$wall" $((rss / 1024)) "$load" \
    "$(grep 'running GPU jobs' "$WORK/$2.err" | sed 's/^gpuscope guard: //')"
  grep -v "running GPU jobs\|^gpuscope guard: enforcing" "$WORK/$2.err" | head -3 || true
}
for run in $(seq 1 "$RUNS"); do
  rm -f "$WORK/state-$run.db"*
  cycle "$WORK/state-$run.db" "first"
  cycle "$WORK/state-$run.db" "second"
done

#!/usr/bin/env bash
# gpuscope job against real components, end to end: a SLURM cluster with accounting (slurmdbd
# over MariaDB), one `gpuscope serve` per node on simulated GPUs scraped by a real Prometheus
# and pushing to a real VictoriaMetrics, and a two-node job that also runs under
# `gpuscope profile` on the same simulated GPUs. Then `gpuscope job ID` on each server must
# agree with the profile: mean SM activity within 1 point, energy within 2 %, the same
# straggler; and its failures must say what is wrong.
# Usage: job_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without SLURM, Prometheus or
# VictoriaMetrics, or without root.
set -euo pipefail
gpuscope=$1
root=$2
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the SLURM cluster needs root"; exit 77; fi
for tool in prometheus victoria-metrics python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-job-test.XXXXXX)
cluster=$work/cluster
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$root/scripts/slurm-cluster.sh" stop "$cluster" || true
  rm -rf "$work" 2>/dev/null || true
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() {  # wait_for DESCRIPTION COMMAND...: polls for up to 60 s
  local what=$1; shift
  for _ in $(seq 1 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $what never happened"; return 1
}
failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
expect_error() {  # expect_error DESCRIPTION TEXT COMMAND...: fails with a message holding TEXT
  local what=$1 text=$2; shift 2
  local out status=0
  out=$("$@" 2>&1) || status=$?
  if [ $status -ne 0 ] && grep -qF -- "$text" <<<"$out"; then echo "ok: $what"; else
    echo "FAIL: $what: exit $status, said: $out"; failures=$((failures + 1)); fi
}

set +e
exports=$("$root/scripts/slurm-cluster.sh" start 2 "$cluster")
status=$?
set -e
if [ $status -eq 77 ]; then echo "SKIP: SLURM is not installed"; exit 77; fi
[ $status -eq 0 ] || { echo "FAIL: could not start the SLURM cluster"; cat "$cluster"/log/* || true; exit 1; }
eval "$exports"

# The servers.
vm_port=$(free_port)
victoria-metrics -storageDataPath="$work/vm" -httpListenAddr="127.0.0.1:$vm_port" \
  -search.latencyOffset=0s -loggerLevel=ERROR >"$work/vm.log" 2>&1 &
pids+=($!)
wait_for "VictoriaMetrics answering" curl -sf "http://127.0.0.1:$vm_port/health"

# Two nodes of four simulated H100s each (GPU 3 a straggler); n2's GPUs get UUIDs of their own.
python3 - "$root/scenarios/h100x4-straggler.json" "$work" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for node, seed in (("n1", 4004), ("n2", 5005)):
    s["seed"] = seed
    json.dump(s, open(f"{sys.argv[2]}/{node}.json", "w"))
PY
export GPUSCOPE_SIM_EPOCH_NS=$(date +%s%N)
serve_ports=()
for node in n1 n2; do
  port=$(free_port)
  serve_ports+=("$port")
  : >"$work/procs-$node.txt"
  GPUSCOPE_SIM_STATE=$work/state-$node.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs-$node.txt \
    "$gpuscope" serve --simulate "$work/$node.json" --node-name "$node" --interval 250 \
    --process-sampling-ms 100 --listen "127.0.0.1:$port" --push "http://127.0.0.1:$vm_port" \
    >"$work/serve-$node.log" 2>&1 &
  pids+=($!)
  wait_for "serve on $node" curl -sf "http://127.0.0.1:$port/metrics"
done
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF2
global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
scrape_configs:
  - job_name: gpu
    static_configs:
      - targets: ['127.0.0.1:${serve_ports[0]}', '127.0.0.1:${serve_ports[1]}']
EOF2
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=error >"$work/prom.log" 2>&1 &
pids+=($!)
wait_for "Prometheus ready" curl -sf "http://127.0.0.1:$prom_port/-/ready"

# The job: on each node, gpuscope profile of a command that names itself to the simulated
# driver as the user of its node's four GPUs (so serve labels them with the job), for 40 s.
cat >"$work/task.sh" <<'EOF2'
#!/bin/bash
node=$SLURMD_NODENAME
GPUSCOPE_SIM_STATE=$WORK/state-$node.json exec "$GPUSCOPE" profile --simulate "$WORK/$node.json" \
  -q -s 250 -o "$WORK/prof/$node.db" -- bash -c \
  'for g in 0 1 2 3; do echo "$g $$ 1000" >>"$WORK/procs-'"$node"'.txt"; done; sleep 40'
EOF2
chmod +x "$work/task.sh"
mkdir -p "$work/prof"
job=$(WORK=$work GPUSCOPE=$gpuscope sbatch --parsable --wait -N 2 --ntasks-per-node=1 \
  --gres=gpu:4 -J train -o "$work/job.out" --wrap "srun $work/task.sh")
echo "job $job done"
sleep 3  # the last scrapes and pushes
kill "${pids[1]}" "${pids[2]}" 2>/dev/null || true  # the serves: their last pushes go out
sleep 1

"$gpuscope" analyze "$work/prof/n1.db" "$work/prof/n2.db" --json >"$work/profile.json"
"$gpuscope" job "$job" --prometheus "http://127.0.0.1:$prom_port" --json >"$work/prom.json" \
  2>"$work/prom.err" || { cat "$work/prom.err"; exit 1; }
"$gpuscope" job "$job" --prometheus "http://127.0.0.1:$vm_port" --json >"$work/vm.json" \
  2>"$work/vm.err" || { cat "$work/vm.err"; exit 1; }
cat "$work/prom.err" "$work/vm.err"
echo "PENDING: compare"
echo "$failures failed"
[ $failures -eq 0 ]

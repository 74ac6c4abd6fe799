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
gpuscope=$(realpath "$1")
root=$(realpath "$2")
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

source "$(dirname "${BASH_SOURCE[0]}")/../support/ports.sh"  # free_port
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
# The scenario (2 s idle, 59 s of training, then idle) starts when the job does: its window
# and the profile's then differ only in idle seconds, as on a real machine.
epoch_s=$(($(date +%s) + 15))
export GPUSCOPE_SIM_EPOCH_NS=${epoch_s}000000000
# One exporter of each family per node, on the same simulated GPUs: gpuscope serve's own names
# (scraped by one Prometheus and pushed to VictoriaMetrics), dcgm-exporter's names (a second
# Prometheus) and jobstats' exporter's (a third, which names the node in `instance`, as the
# sites running jobstats do).
declare -A port
serve_pids=()
for node in n1 n2; do
  : >"$work/procs-$node.txt"
  for naming in gpuscope dcgm jobstats; do
    port[$naming-$node]=$(free_port)
    push=()
    if [ $naming = gpuscope ]; then push=(--push "http://127.0.0.1:$vm_port"); fi
    GPUSCOPE_SIM_STATE=$work/state-$node.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs-$node.txt \
      "$gpuscope" serve --simulate "$work/$node.json" --naming $naming --node-name "$node" \
      --interval 250 --process-sampling-ms 100 --listen "127.0.0.1:${port[$naming-$node]}" \
      "${push[@]}" >"$work/serve-$naming-$node.log" 2>&1 &
    serve_pids+=($!)
    pids+=($!)
    wait_for "$naming serve on $node" curl -sf "http://127.0.0.1:${port[$naming-$node]}/metrics"
  done
done
declare -A prom_ports
for naming in gpuscope dcgm jobstats; do
  prom_ports[$naming]=$(free_port)
  {
    echo "global: {scrape_interval: 500ms, scrape_timeout: 400ms}"
    echo "scrape_configs:"
    echo "  - job_name: $naming"
    echo "    static_configs:"
    for node in n1 n2; do
      echo "      - targets: ['127.0.0.1:${port[$naming-$node]}']"
      if [ $naming = jobstats ]; then echo "        labels: {instance: '$node:9445'}"; fi
    done
  } >"$work/prometheus-$naming.yml"
  prometheus --config.file="$work/prometheus-$naming.yml" --storage.tsdb.path="$work/prom-$naming" \
    --web.listen-address="127.0.0.1:${prom_ports[$naming]}" --log.level=error \
    >"$work/prom-$naming.log" 2>&1 &
  pids+=($!)
done
# Prometheus applies its targets a few seconds after it is ready: the job starts once every
# serve has been scraped.
scraped() { curl -sf "http://127.0.0.1:$1/api/v1/query" --data-urlencode 'query=count(up == 1)' | grep -q '"value":\[[0-9.]*,"2"\]'; }
for naming in gpuscope dcgm jobstats; do
  wait_for "Prometheus scraping the $naming serves" scraped "${prom_ports[$naming]}"
done
prom_port=${prom_ports[gpuscope]}

while [ "$(date +%s)" -lt $((epoch_s - 1)) ]; do sleep 0.2; done

# The job: on each node, gpuscope profile of a command that names itself to the simulated
# driver as the user of its node's four GPUs (so serve labels them with the job), for 66 s.
cat >"$work/task.sh" <<'EOF2'
#!/bin/bash
node=$SLURMD_NODENAME
GPUSCOPE_SIM_STATE=$WORK/state-$node.json exec "$GPUSCOPE" profile --simulate "$WORK/$node.json" \
  -q -s 250 -o "$WORK/prof/$node.%r.db" -- bash -c \
  'for g in 0 1 2 3; do echo "$g $$ 1000" >>"$WORK/procs-'"$node"'.txt"; done; sleep 66'
EOF2
chmod +x "$work/task.sh"
mkdir -p "$work/prof"
job=$(WORK=$work GPUSCOPE=$gpuscope sbatch --parsable --wait -N 2 --ntasks-per-node=1 \
  --gres=gpu:4 -J train -o "$work/job.out" --wrap "srun $work/task.sh") || {
  echo "FAIL: the job failed"; cat "$work/job.out"; exit 1; }
echo "job $job done"
sleep 3  # the last scrapes and pushes
kill "${serve_pids[@]}" 2>/dev/null || true  # the serves: their last pushes go out
sleep 1

# Idle edges left out of both (-d all): the job's window holds a few idle seconds more than the
# profiled command (srun's start, sacct's whole seconds).
"$gpuscope" analyze "$work/prof" -d all --json >"$work/profile.json"
"$gpuscope" job "$job" --prometheus "http://127.0.0.1:$prom_port" -d all --json >"$work/prom.json" \
  2>"$work/prom.err" || { cat "$work/prom.err"; exit 1; }
"$gpuscope" job "$job" --prometheus "http://127.0.0.1:$vm_port" -d all --json >"$work/vm.json" \
  2>"$work/vm.err" || { cat "$work/vm.err"; exit 1; }
for naming in dcgm jobstats; do
  "$gpuscope" job "$job" --prometheus "http://127.0.0.1:${prom_ports[$naming]}" -d all --json \
    >"$work/$naming.json" 2>"$work/$naming.err" || { cat "$work/$naming.err"; exit 1; }
done
cat "$work"/{prom,vm,dcgm,jobstats}.err
# What reading the job cost each server, said on the line that says what was read.
for server in prom vm; do
  check "$server: the requests sent are said" "yes" \
    "$(grep -qE ' GPUs on .*; [0-9]+ requests$' "$work/$server.err" && echo yes)"
done
if [ -n "${GPUSCOPE_KEEP:-}" ]; then  # for a look after the test: the JSON and databases
  cp "$work"/*.json "$work"/prof/*.db "$GPUSCOPE_KEEP/"
  for server in "prom $prom_port" "vm $vm_port"; do set -- $server
    "$gpuscope" job "$job" --prometheus "http://127.0.0.1:$2" -f -o "$GPUSCOPE_KEEP/$1.db" >/dev/null 2>&1
  done
  "$gpuscope" job "$job" --prometheus "http://127.0.0.1:$prom_port" --no-color >"$GPUSCOPE_KEEP/job.txt" 2>&1
fi

# The same GPUs, the same numbers (per GPU by UUID: n2's differ from n1's).
for server in prom vm dcgm jobstats; do
  python3 - "$work/profile.json" "$work/$server.json" "$server" <<'PY' || failures=$((failures + 1))
import json, sys
profile, job, server = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
p = {g["uuid"]: g for g in profile["gpus"]}
j = {g["uuid"]: g for g in job["gpus"]}
bad = []
if sorted(p) != sorted(j):
    bad.append(f"GPUs differ: profile {sorted(p)}, job {sorted(j)}")
for uuid in sorted(set(p) & set(j)):
    a, b = p[uuid], j[uuid]
    pa, ja = 100 * a["activity"], 100 * b["activity"]  # ratios: points are percent
    # jobstats' exporter has no energy counter: its energy is integrated power.
    pe, je = a["energy_j"]["counter"], b["energy_j"]["counter"] or b["energy_j"]["integrated"]
    print(f"{server} {b['host']} GPU {b['index']}: activity {pa:.2f} % vs {ja:.2f} %, "
          f"energy {pe:.0f} J vs {je:.0f} J ({100 * (je - pe) / pe:+.2f} %)")
    # The job's window holds a few seconds more than the profiled command (srun's start,
    # sacct's whole seconds), with the GPUs idle: its activity is diluted by at most those
    # seconds' share of the window (1 point beside it, for the scrapes' edges), and its energy
    # is 2 % plus those seconds at the GPU's idle power.
    longer_s = max(0.0, job["duration_s"] - profile["duration_s"])
    allowed_pts = 1.0 + pa * longer_s / job["duration_s"]
    if abs(pa - ja) > allowed_pts:
        bad.append(f"{uuid}: activity {pa:.2f} vs {ja:.2f} (at most {allowed_pts:.2f} apart)")
    idle_w = ((b.get("over_time") or {}).get("power_w") or {}).get("min") or 0
    extra_j = longer_s * idle_w
    print(f"  window {job['duration_s']:.1f} s vs the profile's {profile['duration_s']:.1f} s, "
          f"idle {idle_w:.0f} W")
    if abs(pe - je) > 0.02 * pe + extra_j:
        bad.append(f"{uuid}: energy {pe:.0f} J vs {je:.0f} J ({extra_j:.0f} J of longer window)")
def stragglers(d):
    return sorted(d["gpus"][s["gpu"]]["uuid"] for s in d["balance"]["stragglers"])
ps, js = stragglers(profile), stragglers(job)
print(f"{server} stragglers: profile {ps}, job {js}")
if not ps or ps != js:
    bad.append(f"stragglers differ: {ps} vs {js}")
for line in bad: print(f"FAIL: {server}: {line}")
sys.exit(1 if bad else 0)
PY
done
# Kept as a run database (one run per node, saying where its samples came from), and the report.
prom=http://127.0.0.1:$prom_port
"$gpuscope" job "$job" --prometheus "$prom" -o "$work/job.db" >/dev/null 2>"$work/keep.err"
check "kept: a run per node" "n1 n2 " "$(sqlite3 "$work/job.db" "SELECT host FROM runs ORDER BY host" | tr '\n' ' ')"
check "kept: the job's id" "$job $job " "$(sqlite3 "$work/job.db" "SELECT slurm_job_id FROM runs" | tr '\n' ' ')"
check "kept: where the samples came from" "Prometheus at $prom, gpuscope serve's series, 0.5 s scrape" \
  "$(sqlite3 "$work/job.db" "SELECT DISTINCT origin FROM runs")"
"$gpuscope" analyze "$work/job.db" >"$work/kept.txt"
check "analyze reads it and says where it came from" "2" "$(grep -c "from Prometheus at" "$work/kept.txt")"
"$gpuscope" job "$job" --prometheus "$prom" -o "$work/job.html" 2>"$work/html.err"
check "the HTML report of the 8 GPUs" "yes" "$(grep -q "wrote $work/job.html (.* MB, 8 GPUs)" "$work/html.err" && [ -s "$work/job.html" ] && echo yes)"

# What goes wrong says so.
expect_error "an unknown job" "SLURM's accounting has no job 999999" "$gpuscope" job 999999 --prometheus "$prom"
expect_error "a server that is not there" "127.0.0.1:1" "$gpuscope" job "$job" --prometheus http://127.0.0.1:1
expect_error "no server configured" "GPUSCOPE_PROMETHEUS_URL" env -u GPUSCOPE_PROMETHEUS_URL \
  GPUSCOPE_CONFIG= XDG_CONFIG_HOME="$work/none" "$gpuscope" job "$job"
expect_error "not a job id" "is not a SLURM job id" "$gpuscope" job "1;rm" --prometheus "$prom"
expect_error "the wrong API path" "404" "$gpuscope" job "$job" --prometheus "$prom/nothing/here"
# VictoriaMetrics keeps a month here (its default): a day of 2020 is gone, and says so.
expect_error "older than the server keeps" "and the server keeps 31 days" \
  "$gpuscope" job --hosts n1 --from 2020-01-01T00:00Z --to 2020-01-02T00:00Z \
  --prometheus "http://127.0.0.1:$vm_port"

# The epilog's summary (--keep-summary) outlives the series: gone from the server, the job is
# analysed from it, and says so.
vm=http://127.0.0.1:$vm_port
"$gpuscope" job "$job" --prometheus "$vm" --summary-dir "$work/kept" --keep-summary 2>"$work/keep.err"
check "the summary kept" "yes" "$([ -s "$work/kept/$job.db" ] && echo yes)"
check "the kept summary is summarised" "1" "$(sqlite3 "$work/kept/$job.db" "SELECT count(DISTINCT origin) FROM runs WHERE origin LIKE '%summarised%'")"
curl -sf "$vm/api/v1/admin/tsdb/delete_series" --data-urlencode 'match[]={__name__=~"gpuscope_.*"}' >/dev/null
expect_error "the series gone, no summary kept" "no exporter series names it" "$gpuscope" job "$job" --prometheus "$vm"
"$gpuscope" job "$job" --prometheus "$vm" --summary-dir "$work/kept" -d all --json >"$work/kept.json" 2>"$work/kept.err"
check "then the kept summary, said" "yes" "$(grep -q "this is the summary kept at its end" "$work/kept.err" && echo yes)"
python3 - "$work/profile.json" "$work/kept.json" <<'PY' || failures=$((failures + 1))
import json, sys
p, k = (json.load(open(f)) for f in sys.argv[1:3])
pe = sum(g["energy_j"]["counter"] for g in p["gpus"])
ke = sum(g["energy_j"]["counter"] for g in k["gpus"])
print(f"kept summary: {len(k['gpus'])} GPUs, energy {ke:.0f} J vs the profile's {pe:.0f} J")
sys.exit(0 if len(k["gpus"]) == 8 and abs(ke - pe) < 0.02 * pe else 1)
PY

echo "$failures failed"
[ $failures -eq 0 ]

#!/usr/bin/env bash
# gpuscope guard against a real SLURM cluster (slurmdbd accounting), as root: three nodes, one
# `gpuscope serve` each on simulated GPUs scraped by a real Prometheus, an SMTP server that
# requires STARTTLS (aiosmtpd). n1's GPUs compute, n2's idle, n3's are idle and GPU 1 reports
# Xid 79 (fallen off the bus) 15 s in. Jobs: a busy job on n1, an idle job on n2 and an exempt
# user's idle job beside it. guard runs a cycle at a time, each a fresh process (a restart).
# Checks: the idle job gets two warnings, then ends CANCELLED with the reason in its
# AdminComment (sacct); the busy and the exempt jobs are left alone; a dry run between the
# cycles does nothing; no mail is sent twice; n3 is drained with its reason in `scontrol show
# node`, the admins told; n1 and n2 are not drained.
# Usage: guard_slurm_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without SLURM,
# Prometheus, openssl or aiosmtpd, or without root.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$(realpath "$2")
py=/usr/bin/python3
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the SLURM cluster needs root"; exit 77; fi
"$py" -c 'import aiosmtpd' 2>/dev/null || { echo "SKIP: python3-aiosmtpd is not installed"; exit 77; }
for tool in prometheus openssl curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-guard-slurm.XXXXXX)
chmod 755 "$work"
source "$(dirname "${BASH_SOURCE[0]}")/../support/slurm_env.sh"
on_failure() { scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null; }

start_cluster 3
add_users physics,chemistry root=physics daemon=chemistry

# The SMTP server (STARTTLS and AUTH required).
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
mkdir "$work/mail"
smtp_port=$(free_port)
"$py" "$root/tests/integration/guard_servers.py" smtp "$smtp_port" "$work/mail" "$work/cert.pem" \
  "$work/key.pem" guard 's3cr3t' &
pids+=($!)
wait_for "the SMTP server" bash -c "exec 3<>/dev/tcp/127.0.0.1/$smtp_port"

"$py" - "$work" <<'PY'
import json, sys
def node(name, util, health=None):
    template = {"model": "H100-SXM5-80GB", "phases": "run"}
    gpus = [dict(template) for _ in range(4)]
    if health:
        gpus[1]["faults"] = {"health": health}
    phase = {"name": "run", "duration_s": 3600, "memory_used_gib": 20}
    if util:
        phase.update(util=util, mem_util=40, sm_active=80, tensor=50, compute_bound=0.8)
    json.dump({"name": name, "seed": 7, "phase_sets": {"run": [phase]}, "gpus": gpus},
              open(f"{sys.argv[1]}/{name}.json", "w"))
node("n1", 90)
node("n2", 0)
node("n3", 0, [{"at_s": 15, "xid": 79}])
PY
epoch_s=$(($(date +%s) + 3))
export GPUSCOPE_SIM_EPOCH_NS=${epoch_s}000000000
declare -A port
for n in n1 n2 n3; do
  : >"$work/procs-$n.txt"
  : >"$work/procs-$n.txt.lock"
  chmod 666 "$work/procs-$n.txt" "$work/procs-$n.txt.lock"
  port[$n]=$(free_port)
  GPUSCOPE_SIM_STATE=$work/state-$n.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs-$n.txt \
    "$gpuscope" serve --simulate "$work/$n.json" --node-name "$n" --interval 250 \
    --process-sampling-ms 100 --listen "127.0.0.1:${port[$n]}" >"$work/serve-$n.log" 2>&1 &
  pids+=($!)
  wait_for "serve on $n" curl -sf "http://127.0.0.1:${port[$n]}/metrics"
done
prom_port=$(free_port)
{
  echo "global: {scrape_interval: 500ms, scrape_timeout: 400ms}"
  echo "scrape_configs:"
  echo "  - job_name: gpuscope"
  echo "    static_configs:"
  for n in n1 n2 n3; do echo "      - targets: ['127.0.0.1:${port[$n]}']"; done
} >"$work/prometheus.yml"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=error >"$work/prom.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$prom_port
scraped() { curl -sf "$prom/api/v1/query" --data-urlencode 'query=count(up == 1)' | grep -q '"value":\[[0-9.]*,"3"\]'; }
wait_for "Prometheus scraping the three serves" scraped

# A task names itself to its node's simulated driver as the user of its GPUs (SLURM_JOB_GPUS)
# and waits to be cancelled.
cat >"$work/task.sh" <<'EOF2'
#!/bin/bash
procs=$WORK/procs-$SLURMD_NODENAME.txt
lines=""
for g in ${SLURM_JOB_GPUS//,/ }; do lines+="$g $$ 1000"$'\n'; done
flock "$procs.lock" bash -c 'printf "%s" "$1" >>"$2"' _ "$lines" "$procs"
sleep 600
EOF2
chmod 755 "$work/task.sh"
submit() { WORK=$work sbatch --parsable -o /dev/null "$@"; }
busy=$(submit -w n1 --gres=gpu:4 -J busy --account=physics --wrap "$work/task.sh")
idle=$(submit -w n2 --gres=gpu:2 -J "idle 'job' nämé" --account=physics --wrap "$work/task.sh")
exempt=$(submit --uid=daemon -w n2 --gres=gpu:2 -J exempt --account=chemistry --wrap "$work/task.sh")
echo "jobs: busy $busy, idle $idle, exempt $exempt"
running() { [ "$(squeue -h -t R -o %i | wc -l)" = 3 ]; }
wait_for "the three jobs running" running
labelled() { curl -sf "$prom/api/v1/query" --data-urlencode \
  'query=count(count by (slurm_job_id) (gpuscope_gpu_util_ratio{slurm_job_id!=""}))' | grep -q '"3"'; }
wait_for "serve labelling the three jobs' GPUs" labelled

echo 'guard:s3cr3t' >"$work/smtp.cred"
chmod 600 "$work/smtp.cred"
cat >"$work/rules.yaml" <<YAML
enforce: true
cluster: testcluster
state: $work/guard.db
audit_log: $work/audit.jsonl
interval: 10s
sample_interval: 1s
idle:
  first_warning: 6s
  second_warning: 12s
  cancel: 18s
  notice: 3s
  min_age: 1s
  exempt: {users: [daemon]}
too_large: {enabled: false}
health:
  max_drained_share: 0.34
notify:
  mail: {smtp: "smtp://127.0.0.1:$smtp_port", from: gpuscope@example.org, domain: example.org,
         credentials: $work/smtp.cred, ca_file: $work/cert.pem}
  admins: [hpc@example.org]
  digest_hour: 0  # due at any hour: the first cycle sends it
YAML
cycle=0
guard() {  # one cycle, a fresh process; its output in cycle-N.*
  cycle=$((cycle + 1))
  "$gpuscope" guard --rules "$work/rules.yaml" --once --prometheus "$prom" "$@" \
    >"$work/cycle-$cycle.jsonl" 2>"$work/cycle-$cycle.err" || true
  tail -n 1 "$work/cycle-$cycle.err"
}
cancelled() { sacct -n -X -P -j "$idle" -o State | head -1 | grep -q "^CANCELLED"; }
for _ in $(seq 1 20); do
  guard
  if [ $cycle = 3 ]; then  # a dry run between the cycles, with its own state: says, does nothing
    "$gpuscope" guard --rules "$work/rules.yaml" --once --prometheus "$prom" --dry-run \
      --state "$work/dry.db" >"$work/dry.jsonl" 2>"$work/dry.err" || true
  fi
  if cancelled && [ "$(scontrol show node n3 | grep -c 'State=.*DRAIN')" = 1 ]; then break; fi
  sleep 3
done
guard  # two more: nothing is sent again
guard

check "the idle job ended CANCELLED" "CANCELLED" "$(sacct -n -X -P -j "$idle" -o State | head -1 | cut -d" " -f1)"
check "with guard's reason in its AdminComment" "yes" \
  "$(sacct -n -X -P -j "$idle" -o AdminComment | grep -q '^gpuscope guard: 2 of 2 GPUs idle' && echo yes)"
check "the busy job still runs" "RUNNING" "$(squeue -h -j "$busy" -o %T)"
check "the exempt user's idle job still runs" "RUNNING" "$(squeue -h -j "$exempt" -o %T)"
subjects=$(grep -h '^Subject:' "$work"/mail/*.eml | sort)
echo "$subjects"
count() { grep -c -- "$1" <<<"$subjects" || true; }
check "one first warning" 1 "$(count "Your job $idle is not using its GPUs")"
check "one second warning" 1 "$(count "Second notice: job $idle")"
check "one cancel notice" 1 "$(count "Job $idle was cancelled")"
check "nothing about the busy or the exempt job" 0 "$(count -e "job $busy" -e "job $exempt")"
check "the warnings went to the job's user" "yes" \
  "$(grep -l "Your job $idle is not" "$work"/mail/*.eml | xargs grep -q '^X-Envelope-To: root@example.org' && echo yes)"
check "the dry run said it would warn" "yes" \
  "$(grep '"delivery":"dry-run"' "$work/dry.jsonl" | grep -q "\"target\":\"$idle\"" && echo yes)"
check "the dry run remembered nothing in guard's state" "0" \
  "$(sqlite3 "$work/guard.db" "SELECT count(*) FROM audit WHERE enforced = 0")"

sacct -X -P -j "$idle" -o State,AdminComment
node3=$(scontrol show node n3)
grep -o 'State=[^ ]*\|Reason=.*' <<<"$node3"
check "n3 drained" "yes" "$(grep -q 'State=[A-Z+]*DRAIN' <<<"$node3" && echo yes)"
check "with the Xid in its reason" "yes" \
  "$(grep -q 'Reason=gpuscope: Xid 79: GPU has fallen off the bus on GPU-' <<<"$node3" && echo yes)"
check "n1 and n2 not drained" "0 0" \
  "$(scontrol show node n1 | grep -c DRAIN) $(scontrol show node n2 | grep -c DRAIN)"
check "the admins told of the drain, once" 1 "$(count 'Node n3 drained: gpuscope: Xid 79')"
check "one daily digest for the admins, across the restarts" 1 "$(count "gpuscope guard's day")"
check "the audit holds the cancel and the drain" "cancel drain" \
  "$(sqlite3 "$work/guard.db" "SELECT action FROM audit WHERE action IN ('cancel','drain') ORDER BY action" | tr '\n' ' ' | sed 's/ $//')"

[ $failures -eq 0 ] || { echo "$failures failures"; for f in "$work"/cycle-*.err; do echo "== $f"; cat "$f"; done; exit 1; }
echo "all guard checks passed against the SLURM cluster"

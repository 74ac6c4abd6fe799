#!/usr/bin/env bash
# The shipped alerting rules (deploy/prometheus/gpuscope-alerts.yml) end to end: promtool checks
# them and runs their unit tests; then a real Prometheus evaluates them over `gpuscope serve` on
# simulated GPUs whose GPU 1 has an uncorrected ECC error (Xid 48) and a row remap (Xid 63) six
# seconds in, and a real Alertmanager (Debian's prometheus-alertmanager) delivers the alerts to
# a webhook receiver: GpuXidNeedsReset and GpuUncorrectedEcc for that GPU, nothing for GPU 0.
# Usage: alerts_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without Prometheus, promtool
# or Alertmanager.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$(realpath "$2")
for tool in prometheus promtool prometheus-alertmanager curl python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-alerts.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/ports.sh"  # free_port
wait_for() {  # wait_for DESCRIPTION SECONDS COMMAND...
  local what=$1 seconds=$2; shift 2
  for _ in $(seq 1 $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $what never happened"; exit 1
}
rules=$root/deploy/prometheus/gpuscope-alerts.yml

promtool check rules "$rules"
(cd "$root/deploy/prometheus" && promtool test rules gpuscope-alerts.test.yml)

hook_port=$(free_port)
python3 "$root/tests/integration/guard_servers.py" webhook "$hook_port" "$work/alerts.jsonl" &
hook_pid=$!
pids+=($hook_pid)
wait_for "the webhook receiver" 30 bash -c "exec 3<>/dev/tcp/127.0.0.1/$hook_port"
kill -0 "$hook_pid" || { echo "FAIL: the webhook receiver did not start (port $hook_port taken?)"; exit 1; }
am_port=$(free_port)
cat >"$work/alertmanager.yml" <<YAML
route:
  receiver: hook
  group_by: [alertname, uuid]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs:
      - url: http://127.0.0.1:$hook_port/alerts
YAML
prometheus-alertmanager --config.file="$work/alertmanager.yml" --storage.path="$work/am" \
  --web.listen-address="127.0.0.1:$am_port" --cluster.listen-address= --log.level=warn \
  >"$work/am.log" 2>&1 &
pids+=($!)
wait_for "Alertmanager answering" 30 curl -sf "http://127.0.0.1:$am_port/-/ready"

export GPUSCOPE_SIM_EPOCH_NS=$(($(date +%s) + 2))000000000
serve_port=$(free_port)
"$gpuscope" serve --simulate "$root/tests/fixtures/scenarios/health-faults.json" --node-name n1 \
  --interval 250 --listen "127.0.0.1:$serve_port" >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for "serve answering" 30 curl -sf "http://127.0.0.1:$serve_port/metrics"
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<YAML
global: {scrape_interval: 500ms, scrape_timeout: 400ms, evaluation_interval: 1s}
rule_files: ['$rules']
alerting:
  alertmanagers:
    - static_configs: [{targets: ['127.0.0.1:$am_port']}]
scrape_configs:
  - job_name: gpuscope
    static_configs: [{targets: ['127.0.0.1:$serve_port']}]
YAML
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=error >"$work/prom.log" 2>&1 &
pids+=($!)

delivered() { grep -q GpuXidNeedsReset "$work/alerts.jsonl" && grep -q GpuUncorrectedEcc "$work/alerts.jsonl"; }
if ! (wait_for "both alerts delivered to the webhook" 90 delivered); then
  echo "== Prometheus' alerts:"; curl -s "http://127.0.0.1:$prom_port/api/v1/alerts" || true
  echo; echo "== Prometheus' rules' health:"
  curl -s "http://127.0.0.1:$prom_port/api/v1/rules" | grep -o '"health":"[a-z]*"' | sort | uniq -c || true
  echo "== Alertmanager's alerts:"; curl -s "http://127.0.0.1:$am_port/api/v2/alerts" || true
  echo; echo "== the webhook received:"; cat "$work/alerts.jsonl" 2>/dev/null || true
  echo "== logs:"; tail -n 5 "$work/am.log" "$work/prom.log" "$work/serve.log"
  exit 1
fi
python3 - "$work/alerts.jsonl" <<'PY'
import json, sys
alerts = [a for line in open(sys.argv[1]) for a in json.loads(line)["alerts"]]
names = {}
for a in alerts:
    names.setdefault(a["labels"]["alertname"], []).append(a)
bad = []
for name in ("GpuXidNeedsReset", "GpuUncorrectedEcc"):
    for a in names.get(name, []):
        if a["status"] != "firing" or a["labels"].get("gpu") != "1" or a["labels"].get("hostname") != "n1":
            bad.append(f"{name}: {a['status']} {a['labels']}")
        if a["labels"].get("severity") != "critical":
            bad.append(f"{name}: severity {a['labels'].get('severity')}")
xid = names["GpuXidNeedsReset"][0]["annotations"]["summary"]
if xid not in ("n1 GPU 1: Xid 48", "n1 GPU 1: Xid 63"):
    bad.append(f"the Xid alert's summary: {xid}")
if any(a["labels"].get("gpu") == "0" for a in alerts):
    bad.append("an alert for the healthy GPU 0")
for b in bad:
    print(f"FAIL: {b}")
if bad:
    sys.exit(1)
print(f"ok: Alertmanager delivered {sorted(names)}; the Xid alert says '{xid}'")
PY
echo "the shipped alerting rules fire and are delivered"

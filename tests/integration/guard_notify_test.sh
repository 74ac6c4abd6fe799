#!/usr/bin/env bash
# gpuscope guard end to end against real servers, each run a fresh process (a restart): a real
# VictoriaMetrics holding an idle job's samples, an SMTP server that requires STARTTLS and AUTH
# (Debian's python3-aiosmtpd), a webhook receiver, and squeue, scontrol and scancel as scripts.
# The job is warned, warned again (no notice twice across the restarts), then cancelled with its
# reason in AdminComment and a copy to the admins; a hostile job name stays inside its header;
# an SMTP server without STARTTLS gets no mail, the notice fails and the step waits.
# Usage: guard_notify_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without
# VictoriaMetrics, openssl or aiosmtpd.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$(realpath "$2")
py=/usr/bin/python3
"$py" -c 'import aiosmtpd' 2>/dev/null || { echo "SKIP: python3-aiosmtpd is not installed"; exit 77; }
for tool in victoria-metrics openssl curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-guard-notify.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
source "$(dirname "${BASH_SOURCE[0]}")/../support/ports.sh"  # free_port
wait_for() {  # wait_for DESCRIPTION COMMAND...: polls for up to 30 s
  local what=$1; shift
  for _ in $(seq 1 300); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $what never happened"; exit 1
}
failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
servers=$root/tests/integration/guard_servers.py

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
mkdir "$work/mail" "$work/plain"
smtp_port=$(free_port)
"$py" "$servers" smtp "$smtp_port" "$work/mail" "$work/cert.pem" "$work/key.pem" guard 's3cr3t:x' &
pids+=($!)
plain_port=$(free_port)
"$py" "$servers" plain-smtp "$plain_port" "$work/plain" &
pids+=($!)
hook_port=$(free_port)
"$py" "$servers" webhook "$hook_port" "$work/hook.jsonl" &
pids+=($!)
vm_port=$(free_port)
victoria-metrics -storageDataPath="$work/vm" -httpListenAddr="127.0.0.1:$vm_port" \
  -search.latencyOffset=0s -loggerLevel=ERROR >"$work/vm.log" 2>&1 &
pids+=($!)
wait_for "VictoriaMetrics answering" curl -sf "http://127.0.0.1:$vm_port/health"
wait_for "the SMTP server" bash -c "exec 3<>/dev/tcp/127.0.0.1/$smtp_port"
wait_for "the webhook receiver" bash -c "exec 3<>/dev/tcp/127.0.0.1/$hook_port"

# Job 7 (alice, two GPUs) began 20 minutes ago; its GPUs have been idle since, a sample every
# 10 s (gpuscope serve's names, labelled with the job), stored up to 15 minutes ahead: the
# samples a running exporter keeps adding while the test's cycles run.
start=$(($(date +%s) - 1200))
"$py" - "$start" >"$work/samples.jsonl" <<'PY'
import json, sys, time
start, now = int(sys.argv[1]), int(time.time())
for uuid, index in (("GPU-A", "0"), ("GPU-B", "1")):
    stamps = list(range(start * 1000, (now + 900) * 1000 + 1, 10_000))
    print(json.dumps({"metric": {"__name__": "gpuscope_gpu_util_ratio", "uuid": uuid, "gpu": index,
                                 "hostname": "n1", "slurm_job_id": "7"},
                      "values": [0.0] * len(stamps), "timestamps": stamps}))
PY
curl -sf --data-binary @"$work/samples.jsonl" "http://127.0.0.1:$vm_port/api/v1/import"
stored() { curl -sf "http://127.0.0.1:$vm_port/api/v1/query" --data-urlencode \
  'query=count(count_over_time(gpuscope_gpu_util_ratio[30m]))' | grep -q '"2"'; }
wait_for "the samples stored" stored

# squeue's answer (Slurm 24.11's shape); the job's name tries to start a mail header.
"$py" - "$start" >"$work/squeue.json" <<'PY'
import json, sys
print(json.dumps({"jobs": [{
    "job_id": 7, "user_name": "alice", "account": "physics", "partition": "gpu", "qos": "normal",
    "name": "train\r\nBcc: everyone@example.org", "job_state": ["RUNNING"], "nodes": "n1",
    "batch_flag": True, "tres_alloc_str": "cpu=8,node=1,gres/gpu=2",
    "start_time": {"set": True, "infinite": False, "number": int(sys.argv[1])}}]}))
PY
printf '#!/bin/sh\ncat %s\n' "$work/squeue.json" >"$work/squeue"
printf '#!/bin/sh\necho "scancel $*" >>%s\n' "$work/actions.log" >"$work/scancel"
printf '#!/bin/sh\necho "scontrol $*" >>%s\n' "$work/actions.log" >"$work/scontrol"
chmod +x "$work/squeue" "$work/scancel" "$work/scontrol"
: >"$work/actions.log"
printf '#!/bin/sh\necho "n1|gpu|mixed"\n' >"$work/sinfo"
chmod +x "$work/sinfo"
export GPUSCOPE_SQUEUE=$work/squeue GPUSCOPE_SCANCEL=$work/scancel GPUSCOPE_SCONTROL=$work/scontrol \
  GPUSCOPE_SINFO=$work/sinfo
echo 'guard:s3cr3t:x' >"$work/smtp.cred"
echo "http://127.0.0.1:$hook_port/hook" >"$work/hook.url"
chmod 600 "$work/smtp.cred" "$work/hook.url"
rules() {  # rules SMTP_PORT STATE
  cat <<YAML
enforce: true
cluster: testcluster
state: $2
audit_log: $work/audit.jsonl
sample_interval: 10s
idle:
  first_warning: 2m
  second_warning: 4m
  cancel: 6m
  notice: 5s
  min_age: 1m
too_large: {enabled: false}
notify:
  mail: {smtp: "smtp://127.0.0.1:$1", from: gpuscope@example.org, domain: example.org,
         credentials: $work/smtp.cred, ca_file: $work/cert.pem}
  webhook: {url_file: $work/hook.url}
  admins: [hpc@example.org]
  digest_hour: -1  # the digest: guard_slurm_test.sh and GuardDigest.*
YAML
}
rules "$smtp_port" "$work/guard.db" >"$work/rules.yaml"
guard() {  # guard N: one cycle, its stdout in run-N.jsonl
  "$gpuscope" guard --rules "$work/rules.yaml" --once --prometheus "http://127.0.0.1:$vm_port" \
    >"$work/run-$1.jsonl" 2>"$work/run-$1.err" || true
}
mails() { find "$work/mail" -name '*.eml' | wc -l; }

guard 1
check "the first warning is sent" "1 1" "$(mails) $(wc -l <"$work/hook.jsonl")"
check "it says so on stdout" "yes" "$(grep '"notice":"first_warning"' "$work/run-1.jsonl" | grep -q '"delivery":"sent"' && echo yes)"
mail1=$(find "$work/mail" -name '*.eml')
check "to alice at the domain" "yes" "$(grep -q '^To: alice@example.org' "$mail1" && echo yes)"
check "the hostile name starts no header" "no" "$(grep -qi '^Bcc:' "$mail1" && echo yes || echo no)"
check "the webhook's text" "yes" "$(grep -q '"kind":"first_warning"' "$work/hook.jsonl" && echo yes)"
guard 2
check "the second warning, once, after a restart" "2 2" "$(mails) $(wc -l <"$work/hook.jsonl")"
check "no scancel before the notice" "" "$(cat "$work/actions.log")"
sleep 6
guard 3
check "cancelled, with the reason in AdminComment" "yes" \
  "$(grep -q '^scontrol update JobId=7 AdminComment=gpuscope guard: 2 of 2 GPUs idle' "$work/actions.log" && echo yes)"
check "scancel 7" "yes" "$(grep -qx 'scancel 7' "$work/actions.log" && echo yes)"
check "the cancel's mail copies the admins" "yes" \
  "$(grep -l 'was cancelled' "$work"/mail/*.eml | xargs grep -q '^X-Envelope-To: .*hpc@example.org' && echo yes)"
guard 4
check "nothing more after the cancel" "3 1" "$(mails) $(grep -c '^scancel' "$work/actions.log")"
check "the audit holds the three steps" "3" "$(grep -c '"enforced":true' "$work/audit.jsonl")"

# An SMTP server without STARTTLS: no mail in clear; the notice fails and waits.
rules "$plain_port" "$work/plain.db" >"$work/rules.yaml"
unset GPUSCOPE_SCANCEL
guard 5
guard 6
check "no mail to a server without STARTTLS" "0" "$(find "$work/plain" -name '*.eml' | wc -l)"
check "the notice failed and is tried again" "2" "$(cat "$work"/run-5.jsonl "$work"/run-6.jsonl | grep '"notice":"first_warning"' | grep -c '"delivery":"failed"')"
check "the failure names TLS" "yes" "$(grep -qi 'tls\|ssl' "$work/run-5.jsonl" && echo yes)"
echo "--- run 5:"; cat "$work/run-5.jsonl" "$work/run-5.err"
[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }

#!/usr/bin/env bash
# gpuscope mail as SLURM's MailProg, end to end: a one-node SLURM cluster (accounting through
# slurmdbd) whose slurm.conf sets MailProg to a wrapper of gpuscope mail, mail.conf pointing at
# Debian's msmtp, msmtp delivering to an SMTP server the test starts (Debian's python3-aiosmtpd,
# its Mailbox handler), `gpuscope serve` on simulated GPUs scraped by a real Prometheus. Jobs
# with --mail-type: a GPU job with quotes and non-ASCII in its name (BEGIN and END mails), a
# failed GPU job (FAIL), a job without GPUs (END). Checks: the END and FAIL mails hold the
# summary with the figures of `gpuscope job ID --row --json`; the BEGIN mail and the job without
# GPUs get the plain mail, unchanged; the subject arrives as slurmctld wrote it; with the server
# down, slow, or sacct failing the mail still goes, saying so in one line, in bounded time; the
# mail program's exit status is gpuscope mail's.
# Usage: mail_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without SLURM, Prometheus, msmtp
# or aiosmtpd, or without root.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$(realpath "$2")
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the SLURM cluster needs root"; exit 77; fi
for tool in prometheus msmtp curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
# aiosmtpd is Debian's python3-aiosmtpd, for the system's Python.
py=/usr/bin/python3
"$py" -c 'import aiosmtpd' 2>/dev/null || { echo "SKIP: python3-aiosmtpd is not installed"; exit 77; }
work=$(mktemp -d /tmp/gpuscope-mail-test.XXXXXX)
chmod 755 "$work"
source "$(dirname "${BASH_SOURCE[0]}")/../support/slurm_env.sh"
on_failure() {
  [ -d "$cluster/log" ] && grep -i mail "$cluster"/log/slurmctld.log | tail -n 20
  cat "$work"/mailprog.err 2>/dev/null || true
}

start_cluster 1 "MailProg=$work/mailprog"

# The SMTP server: every message a file in the maildir $work/maildir.
smtp_port=$(free_port)
"$py" -m aiosmtpd -n -l "127.0.0.1:$smtp_port" -c aiosmtpd.handlers.Mailbox "$work/maildir" \
  >"$work/smtpd.log" 2>&1 &
pids+=($!)
wait_for "the SMTP server" bash -c "exec 3<>/dev/tcp/127.0.0.1/$smtp_port"
printf '%s\n' "account default" "host 127.0.0.1" "port $smtp_port" "from slurm@example.org" \
  "auth off" "tls off" >"$work/msmtprc"
chmod 600 "$work/msmtprc"

# n1: four simulated H100s, labelled with the job that uses them (a task names itself to the
# simulated driver as its GPUs' user, as in fleet_test.sh).
epoch_s=$(($(date +%s) + 8))
export GPUSCOPE_SIM_EPOCH_NS=${epoch_s}000000000
: >"$work/procs.txt"
: >"$work/procs.txt.lock"
chmod 666 "$work/procs.txt" "$work/procs.txt.lock"
serve_port=$(free_port)
GPUSCOPE_SIM_STATE=$work/state.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs.txt \
  "$gpuscope" serve --simulate "$root/scenarios/h100x4-straggler.json" --node-name n1 \
  --interval 250 --process-sampling-ms 100 --listen "127.0.0.1:$serve_port" \
  >"$work/serve.log" 2>&1 &
pids+=($!)
wait_for "serve" curl -sf "http://127.0.0.1:$serve_port/metrics"
prom_port=$(free_port)
printf '%s\n' "global: {scrape_interval: 500ms, scrape_timeout: 400ms}" "scrape_configs:" \
  "  - job_name: gpuscope" "    static_configs: [{targets: ['127.0.0.1:$serve_port']}]" \
  >"$work/prometheus.yml"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=error >"$work/prom.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$prom_port
scraped() { curl -sf "$prom/api/v1/query" --data-urlencode 'query=up == 1' | grep -q '"value"'; }
wait_for "Prometheus scraping serve" scraped
while [ "$(date +%s)" -lt $((epoch_s - 1)) ]; do sleep 0.2; done

# MailProg: slurmctld gives it the job's variables only, so the wrapper says where the
# configuration, the server and SLURM's are; gpuscope-mail is a link to gpuscope.
cat >"$work/mail.conf" <<CONF
# gpuscope mail's configuration for this test
mail_program = /usr/bin/msmtp
mail_arguments = -C $work/msmtprc
timeout = 40s
settle = 2s
CONF
mkdir "$work/bin"
ln -s "$gpuscope" "$work/bin/gpuscope-mail"
cat >"$work/mailprog" <<WRAP
#!/bin/sh
export GPUSCOPE_MAIL_CONFIG=$work/mail.conf GPUSCOPE_PROMETHEUS_URL=$prom SLURM_CONF=$SLURM_CONF
export PATH=/usr/bin:/bin
exec $work/bin/gpuscope-mail "\$@" 2>>$work/mailprog.err
WRAP
chmod 755 "$work/mailprog"

cat >"$work/task.sh" <<'EOF2'
#!/bin/bash
procs=$WORK/procs.txt
lines=""
for g in ${SLURM_JOB_GPUS//,/ }; do lines+="$g $$ 1000"$'\n'; done
flock "$procs.lock" bash -c 'printf "%s" "$1" >>"$2"' _ "$lines" "$procs"
sleep "$1"
flock "$procs.lock" bash -c 'kept=$(grep -v " $1 " "$2"); printf "%s\n" "$kept" >"$2"' _ "$$" "$procs"
exit "${2:-0}"
EOF2
chmod 755 "$work/task.sh"
submit() { WORK=$work sbatch --parsable -o /dev/null --mail-user=someone@example.org "$@"; }
train=$(submit --gres=gpu:2 -J "train 'q' nämé" --mail-type=BEGIN,END,FAIL --wrap "$work/task.sh 10")
broken=$(submit --gres=gpu:1 -J broken --mail-type=END,FAIL --wrap "$work/task.sh 5 3")
cpu=$(submit -J cpu-only --mail-type=END,FAIL --wrap "sleep 1")
echo "jobs: train $train, broken $broken, no GPU $cpu"
mails() { ls "$work/maildir/new" 2>/dev/null | wc -l; }
four_mails() { [ "$(mails)" -ge 4 ]; }
wait_for "the four mails" four_mails
sleep 2  # a fifth would be a mail too many
check "four mails: BEGIN and END of the GPU job, FAIL of the failed one, END of the CPU job" 4 "$(mails)"
for id in "$train" "$broken"; do
  "$gpuscope" job "$id" --prometheus "$prom" --row --json >"$work/row-$id.json" 2>/dev/null
done

# The mails as they arrived: the summary's figures are the job's row, to the digits printed.
"$py" - "$work/maildir" "$work" "$train" "$broken" "$cpu" <<'PY' || failures=$((failures + 1))
import email, email.policy, json, os, re, sys
box, work, train, broken, cpu = sys.argv[1:6]
bad = []
got = {}
for name in sorted(os.listdir(os.path.join(box, "new"))):
    raw = open(os.path.join(box, "new", name), "rb").read()
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    subject = str(msg["Subject"])
    job = re.match(r"Slurm Job_id=(\d+) ", subject)
    if not job:
        bad.append(f"a mail that is not SLURM's: {raw[:2000]!r}")
        continue
    job = job.group(1)
    kind = "Began" if " Began" in subject else "Failed" if " Failed," in subject else "Ended"
    got[(job, kind)] = (subject, msg.get_content(), msg)
    print(f"--- {subject}\n{msg.get_content()}", end="")
want = {(train, "Began"), (train, "Ended"), (broken, "Failed"), (cpu, "Ended")}
if set(got) != want:
    bad.append(f"mails {sorted(got)}, expected {sorted(want)}")

def same(text, value, scale=1.0):
    """The printed number equals value/scale to its printed digits."""
    digits = len(text.split(".")[1]) if "." in text else 0
    return value is not None and abs(float(text) - value / scale) <= 0.5 * 10 ** -digits + 1e-9

def check_summary(job, body):
    row = json.load(open(f"{work}/row-{job}.json"))
    print(f"job {job}: row {row['gpus']} GPUs, {row['gpu_hours']} GPU-h, {row['energy_j']} J, flags {row['flags']}")
    lines = dict(re.findall(r"^  ([A-Za-z -]+?):\s+(.*)$", body, re.M))
    if not body.startswith(f"GPU summary of job {job} (gpuscope)\n"):
        bad.append(f"job {job}: the summary's heading: {body[:60]!r}")
    m = re.match(r"(\d+)(?: x .*)? on (\S+), ", lines.get("GPUs", ""))
    if not m or int(m.group(1)) != row["gpus"] or m.group(2) != ",".join(row["nodes"]):
        bad.append(f"job {job}: GPUs line {lines.get('GPUs')!r}, row {row['gpus']} on {row['nodes']}")
    m = re.match(r"([\d.]+), idle ([\d.]+)$", lines.get("GPU-hours", ""))
    if not m or not same(m.group(1), row["gpu_hours"]) or not same(m.group(2), row["idle_gpu_hours"]):
        bad.append(f"job {job}: GPU-hours {lines.get('GPU-hours')!r}, row {row['gpu_hours']} {row['idle_gpu_hours']}")
    m = re.match(r"([\d.]+) %(?:, SM active ([\d.]+) %)?$", lines.get("GPU utilization", ""))
    if not m or not same(m.group(1), row["util_pct"]) or (m.group(2) and not same(m.group(2), row["sm_active_pct"])):
        bad.append(f"job {job}: utilization {lines.get('GPU utilization')!r}, row {row['util_pct']} {row['sm_active_pct']}")
    m = re.match(r"([\d.]+) GiB$", lines.get("Peak GPU memory", ""))
    if not m or not same(m.group(1), row["peak_memory_bytes"], 2 ** 30):
        bad.append(f"job {job}: memory {lines.get('Peak GPU memory')!r}, row {row['peak_memory_bytes']}")
    m = re.match(r"([\d.]+) (kJ|kWh) \(GPUs\), CO2 ([\d.]+) (g|kg)$", lines.get("Energy", ""))
    if (not m or not same(m.group(1), row["energy_j"], 1e3 if m.group(2) == "kJ" else 3.6e6)
            or not same(m.group(3), row["co2_g"], 1 if m.group(4) == "g" else 1e3)):
        bad.append(f"job {job}: energy {lines.get('Energy')!r}, row {row['energy_j']} J {row['co2_g']} g")
    m = re.match(r"([\d.]+) \(0 to 1\)$", lines.get("Score", ""))
    if row["score"] is not None and (not m or not same(m.group(1), row["score"])):
        bad.append(f"job {job}: score {lines.get('Score')!r}, row {row['score']}")
    flags = re.findall(r"^  Flag:\s+([a-z-]+):", body, re.M)
    if flags != row["flags"]:
        bad.append(f"job {job}: flags {flags}, row {row['flags']}")
    if lines.get("Full analysis") != f"gpuscope job {job}":
        bad.append(f"job {job}: no command for the full analysis")
    return row

if not bad:
    subject, body, msg = got[(train, "Ended")]
    if not subject.startswith(f"Slurm Job_id={train} Name=train 'q' nämé Ended, Run time "):
        bad.append(f"the subject did not arrive as slurmctld wrote it: {subject!r}")
    if msg["X-RcptTo"] != "someone@example.org" or msg["To"] != "someone@example.org":
        bad.append(f"sent to {msg['X-RcptTo']} (To: {msg['To']})")
    check_summary(train, body)
    subject, body, msg = got[(broken, "Failed")]
    row = check_summary(broken, body)
    if row["state"] != "FAILED" or "FAILED, ExitCode 3" not in subject:
        bad.append(f"failed job: {row['state']}, subject {subject!r}")
    for key in ((train, "Began"), (cpu, "Ended")):
        subject, body, msg = got[key]
        if body != "":
            bad.append(f"{key}: the plain mail changed: {body!r}")
    if "Name=cpu-only Ended, Run time" not in got[(cpu, "Ended")][0]:
        bad.append(f"the CPU job's subject: {got[(cpu, 'Ended')][0]!r}")
print(f"mails: {len(got)}; summaries equal to the rows: {not bad}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

# Faults: the mail goes all the same, in bounded time, saying why in one line.
by_hand() {  # by_hand CONFIG SERVER [ENV...]: an END mail of $train as slurmctld would send it
  local config=$1 server=$2; shift 2
  env -i PATH=/usr/bin:/bin SLURM_CONF="$SLURM_CONF" GPUSCOPE_MAIL_CONFIG="$config" \
    GPUSCOPE_PROMETHEUS_URL="$server" SLURM_JOB_ID="$train" SLURM_JOB_MAIL_TYPE=Ended "$@" \
    "$work/bin/gpuscope-mail" -s "Slurm Job_id=$train Name=by hand Ended, Run time 00:00:10, COMPLETED, ExitCode 0" \
    someone@example.org </dev/null 2>>"$work/by-hand.err"
}
last_body() {  # the body of the newest mail
  "$py" - "$work/maildir" <<'PY'
import email, email.policy, os, sys
d = os.path.join(sys.argv[1], "new")
newest = max((os.path.join(d, f) for f in os.listdir(d)), key=os.path.getmtime)
print(email.message_from_binary_file(open(newest, "rb"), policy=email.policy.default).get_content(), end="")
PY
}
closed_port=$(free_port)
by_hand "$work/mail.conf" "http://127.0.0.1:$closed_port"
check "the server down: the mail is sent" 5 "$(mails)"
check "saying so in one line" "yes" "$(last_body | grep -qx "(No GPU summary of job $train: .*\.)" && [ "$(last_body | wc -l)" = 1 ] && echo yes)"
# A server that takes the connection and never answers: the mail after mail.conf's timeout.
slow_port=$(free_port)
"$py" -c "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', $slow_port)); s.listen(8); c=[s.accept() for _ in range(8)]; time.sleep(600)" &
pids+=($!)
sed 's/^timeout = .*/timeout = 3s/' "$work/mail.conf" >"$work/mail-3s.conf"
start_s=$SECONDS
by_hand "$work/mail-3s.conf" "http://127.0.0.1:$slow_port"
check "a silent server: the mail within the timeout" "yes" "$( [ $((SECONDS - start_s)) -le 8 ] && [ "$(mails)" = 6 ] && echo yes)"
check "saying it did not have it" "yes" "$(last_body | grep -q "did not have it within 3 s" && echo yes)"
by_hand "$work/mail.conf" "$prom" GPUSCOPE_SACCT=false
check "sacct failing: the mail says so" "yes" "$(last_body | grep -q "sacct failed (exit 1)" && echo yes)"
# The mail program's status is gpuscope mail's; one that cannot start is said.
sed 's|^mail_program = .*|mail_program = /bin/false|' "$work/mail.conf" >"$work/false.conf"
status=0; by_hand "$work/false.conf" "$prom" || status=$?
check "the mail program's exit status" 1 "$status"
sed 's|^mail_program = .*|mail_program = /nonexistent/mail|' "$work/mail.conf" >"$work/none.conf"
status=0; by_hand "$work/none.conf" "$prom" || status=$?
check "a mail program that cannot start" "1 yes" "$status $(grep -q "cannot run the mail program /nonexistent/mail" "$work/by-hand.err" && echo yes)"

echo "$failures failed"
[ $failures -eq 0 ]

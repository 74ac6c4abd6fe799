#!/usr/bin/env bash
# gpuscope jobs, usage and the accounting database against real components, end to end: a SLURM
# cluster of three nodes with accounting (slurmdbd over MariaDB; accounts made with sacctmgr),
# one `gpuscope serve` per node on simulated GPUs scraped by a real Prometheus and pushing to a
# real VictoriaMetrics, and jobs of two users: a two-node training job (a straggler GPU), a job
# whose GPUs idle (its name with quotes, spaces and non-ASCII), an array job, a failed job and a
# job without GPUs. Checks: every row of `jobs` equals `job ID --row`; the rows agree with
# `job ID`'s analysis; the flags; the accounting database holds the same rows, once each, after
# a second update and after an update the server failed in the middle of; usage sums the rows;
# who may read the database.
# Usage: fleet_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) without SLURM, Prometheus or
# VictoriaMetrics, or without root.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$(realpath "$2")
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the SLURM cluster needs root"; exit 77; fi
for tool in prometheus victoria-metrics python3 sqlite3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-fleet-test.XXXXXX)
chmod 755 "$work"
source "$(dirname "${BASH_SOURCE[0]}")/../support/slurm_env.sh"
expect_error() {  # expect_error DESCRIPTION TEXT COMMAND...: fails with a message holding TEXT
  local what=$1 text=$2; shift 2
  local out status=0
  out=$("$@" 2>&1) || status=$?
  if [ $status -ne 0 ] && grep -qF -- "$text" <<<"$out"; then echo "ok: $what"; else
    echo "FAIL: $what: exit $status, said: $out"; failures=$((failures + 1)); fi
}

start_cluster 3 "PartitionName=long Nodes=n[1-3] MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
# Two accounts, two users (root and daemon: users every machine has).
add_users physics,chemistry root=physics daemon=chemistry

vm_port=$(free_port)
victoria-metrics -storageDataPath="$work/vm" -httpListenAddr="127.0.0.1:$vm_port" \
  -search.latencyOffset=0s -loggerLevel=ERROR >"$work/vm.log" 2>&1 &
pids+=($!)
wait_for "VictoriaMetrics answering" curl -sf "http://127.0.0.1:$vm_port/health"

# n1 and n2: four H100s training (GPU 3 a straggler); n3: four H100s that stay idle.
python3 - "$root/scenarios/h100x4-straggler.json" "$work" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for node, seed in (("n1", 4004), ("n2", 5005)):
    s["seed"] = seed
    json.dump(s, open(f"{sys.argv[2]}/{node}.json", "w"))
idle = {"name": "idle4", "seed": 6006, "phase_sets": {"idle": [{"name": "idle", "duration_s": 3600}]},
        "gpus": {"count": 4, "template": {"model": "H100-SXM5-80GB", "phases": "idle"}}}
json.dump(idle, open(f"{sys.argv[2]}/n3.json", "w"))
PY
epoch_s=$(($(date +%s) + 12))
export GPUSCOPE_SIM_EPOCH_NS=${epoch_s}000000000
declare -A port
for node in n1 n2 n3; do
  : >"$work/procs-$node.txt"
  : >"$work/procs-$node.txt.lock"
  chmod 666 "$work/procs-$node.txt" "$work/procs-$node.txt.lock"
  port[$node]=$(free_port)
  GPUSCOPE_SIM_STATE=$work/state-$node.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs-$node.txt \
    "$gpuscope" serve --simulate "$work/$node.json" --node-name "$node" --interval 250 \
    --process-sampling-ms 100 --listen "127.0.0.1:${port[$node]}" \
    --push "http://127.0.0.1:$vm_port" >"$work/serve-$node.log" 2>&1 &
  pids+=($!)
  wait_for "serve on $node" curl -sf "http://127.0.0.1:${port[$node]}/metrics"
  # jobstats' exporter's shape too: the job in nvidia_gpu_jobId, no job label on the metrics.
  port[jobstats-$node]=$(free_port)
  GPUSCOPE_SIM_STATE=$work/state-$node.json GPUSCOPE_SIM_PROCESSES_FILE=$work/procs-$node.txt \
    "$gpuscope" serve --simulate "$work/$node.json" --node-name "$node" --interval 250 \
    --naming jobstats --process-sampling-ms 100 --listen "127.0.0.1:${port[jobstats-$node]}" \
    >"$work/serve-jobstats-$node.log" 2>&1 &
  pids+=($!)
  wait_for "jobstats serve on $node" curl -sf "http://127.0.0.1:${port[jobstats-$node]}/metrics"
done
prom_port=$(free_port)
jobstats_port=$(free_port)
for kind in gpuscope jobstats; do
  {
    echo "global: {scrape_interval: 500ms, scrape_timeout: 400ms}"
    echo "scrape_configs:"
    echo "  - job_name: $kind"
    echo "    static_configs:"
    for node in n1 n2 n3; do
      if [ $kind = gpuscope ]; then echo "      - targets: ['127.0.0.1:${port[$node]}']"; else
        echo "      - targets: ['127.0.0.1:${port[jobstats-$node]}']"
        echo "        labels: {instance: '$node:9445'}"; fi
    done
  } >"$work/prometheus-$kind.yml"
done
prometheus --config.file="$work/prometheus-gpuscope.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" --log.level=error >"$work/prom.log" 2>&1 &
pids+=($!)
prometheus --config.file="$work/prometheus-jobstats.yml" --storage.tsdb.path="$work/prom-jobstats" \
  --web.listen-address="127.0.0.1:$jobstats_port" --log.level=error >"$work/prom-jobstats.log" 2>&1 &
pids+=($!)
scraped() { curl -sf "http://127.0.0.1:$1/api/v1/query" --data-urlencode 'query=count(up == 1)' | grep -q '"value":\[[0-9.]*,"3"\]'; }
wait_for "Prometheus scraping the three serves" scraped "$prom_port"
wait_for "Prometheus scraping the three jobstats serves" scraped "$jobstats_port"
prom=http://127.0.0.1:$prom_port
vm=http://127.0.0.1:$vm_port
while [ "$(date +%s)" -lt $((epoch_s - 1)) ]; do sleep 0.2; done
from=$(date -u +%Y-%m-%dT%H:%M:%SZ -d @$(($(date +%s) - 5)))

# A task names itself to its node's simulated driver as the user of its GPUs (SLURM_JOB_GPUS),
# so serve labels them with the job, works for $1 seconds, leaves the driver's list as a process
# does when it ends, and exits with $2.
cat >"$work/task.sh" <<'EOF2'
#!/bin/bash
node=$SLURMD_NODENAME
procs=$WORK/procs-$node.txt
lines=""
for g in ${SLURM_JOB_GPUS//,/ }; do lines+="$g $$ 1000"$'\n'; done
flock "$procs.lock" bash -c 'printf "%s" "$1" >>"$2"' _ "$lines" "$procs"
sleep "$1"
flock "$procs.lock" bash -c 'kept=$(grep -v " $1 " "$2"); printf "%s\n" "$kept" >"$2"' _ "$$" "$procs"
exit "${2:-0}"
EOF2
chmod 755 "$work/task.sh"
submit() { WORK=$work sbatch --parsable -o /dev/null "$@"; }

train=$(submit -N 2 -w n1,n2 --ntasks-per-node=1 --gres=gpu:4 -J train --account=physics \
  --wrap "srun $work/task.sh 40")
idle=$(submit --uid=daemon --account=chemistry -w n3 --gres=gpu:4 -J "idle 'quoted' nämé" \
  --wrap "$work/task.sh 12")
array=$(submit --uid=daemon --account=chemistry -p long -w n3 --gres=gpu:1 --array=0-1 -J sweep \
  --wrap "$work/task.sh 6")
failed=$(submit --account=physics -w n3 --gres=gpu:1 -J broken --wrap "$work/task.sh 4 3")
nogpu=$(submit --account=physics -J cpu-only --wrap "sleep 1")
echo "jobs: train $train, idle $idle, array $array, failed $failed, no GPU $nogpu"
all_done() { [ -z "$(squeue -h -o %i)" ]; }
wait_for "every job ending" all_done
sleep 4  # the last scrapes and pushes
to=$(date -u +%Y-%m-%dT%H:%M:%SZ)
sacct -a -X -P -n -S "$(date -d "$from" +%Y-%m-%dT%H:%M:%S)" -o JobIDRaw,JobID,User,Account,Partition,State,AllocTRES,JobName

echo "series per job: $(curl -s "$prom/api/v1/query" --data-urlencode 'query=count by (slurm_job_id) (count_over_time(gpuscope_gpu_util_ratio{slurm_job_id!=""}[10m]))')"

# The table from sacct and Prometheus, as JSON.
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "$prom" --json >"$work/live.json" 2>"$work/live.err" ||
  { cat "$work/live.err"; exit 1; }
cat "$work/live.err"
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "$prom" | tee "$work/live.txt"
python3 - "$work/live.json" "$train" "$idle" "$array" "$failed" "$nogpu" <<'PY' || failures=$((failures + 1))
import json, sys
d = json.load(open(sys.argv[1]))
train, idle, array, failed, nogpu = sys.argv[2:7]
rows = {j["shown_id"]: j for j in d["jobs"]}
bad = []
want = {train, idle, f"{array}_0", f"{array}_1", failed}
if set(rows) != want:
    bad.append(f"jobs {sorted(rows)}, expected {sorted(want)}")
else:
    t, i, f = rows[train], rows[idle], rows[failed]
    if "straggler" not in t["flags"]: bad.append(f"train flags {t['flags']}")
    if t["gpus"] != 8 or len(t["gpu_rows"]) != 8: bad.append(f"train GPUs {t['gpus']}, rows {len(t.get('gpu_rows', []))}")
    if not (t["util_pct"] or 0) > 50: bad.append(f"train utilization {t['util_pct']}")
    if "idle" not in i["flags"] or abs(i["idle_gpu_hours"] - i["gpu_hours"]) > 0.02 * i["gpu_hours"]:
        bad.append(f"idle job: flags {i['flags']}, idle {i['idle_gpu_hours']} of {i['gpu_hours']} GPU-hours")
    if i["name"] != "idle 'quoted' nämé" or i["user"] != "daemon" or i["account"] != "chemistry":
        bad.append(f"idle job's name/user/account: {i['name']!r} {i['user']} {i['account']}")
    if f["state"] != "FAILED" or f["exit_code"] != 3: bad.append(f"failed job: {f['state']} {f['exit_code']}")
    if rows[f"{array}_0"]["partition"] != "long": bad.append("array task's partition")
    if d["jobs"][0]["shown_id"] not in (idle,): bad.append(f"first row {d['jobs'][0]['shown_id']}, not the idlest")
    tot = d["total"]
    for key in ("gpu_hours", "idle_gpu_hours", "energy_j", "co2_g"):
        s = sum(j[key] or 0 for j in d["jobs"])
        if abs(s - tot[key]) > 1e-6 * max(1, s): bad.append(f"total {key} {tot[key]} != sum {s}")
    for j in d["jobs"]:
        if j["energy_j"] is None or j["energy_j"] <= 0: bad.append(f"{j['shown_id']}: energy {j['energy_j']}")
        print(f"{j['shown_id']:>8} {j['user']:>7} {j['gpus']} GPUs {j['gpu_hours']:.4f} GPU-h idle {j['idle_gpu_hours']} "
              f"util {j['util_pct']} % energy {j['energy_j']} J flags {j['flags']}")
for line in bad: print(f"FAIL: {line}")
sys.exit(1 if bad else 0)
PY

# Every row is the job's own row (`job ID --row`), to the last figure.
for id in $(python3 -c 'import json,sys; print(" ".join(j["id"] for j in json.load(open(sys.argv[1]))["jobs"]))' "$work/live.json"); do
  "$gpuscope" job "$id" --prometheus "$prom" --row --json >"$work/row-$id.json" 2>/dev/null
  check "job $id --row equals its row of jobs" "same" "$(python3 - "$work/live.json" "$work/row-$id.json" "$id" <<'PY'
import json, sys
rows = {j["id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}
one = json.load(open(sys.argv[2]))
print("same" if rows[sys.argv[3]] == one else f"differs: {rows[sys.argv[3]]} vs {one}")
PY
)"
done

# The rows agree with the job's analysis, which reads every sample of the job's GPUs in its
# window where the row reads the samples labelled with it: the label comes with serve's first
# look at the job's processes, so up to 2 s of this 41-second job (8 GPUs of at most 700 W,
# about 5 points of its time) may be in the one and not the other.
"$gpuscope" job "$train" --prometheus "$prom" -d none --json >"$work/train-analysis.json" 2>/dev/null
python3 - "$work/live.json" "$work/train-analysis.json" "$train" <<'PY' || failures=$((failures + 1))
import json, sys
row = {j["id"]: j for j in json.load(open(sys.argv[1]))["jobs"]}[sys.argv[3]]
a = json.load(open(sys.argv[2]))
ae = sum(g["energy_j"]["counter"] for g in a["gpus"])
au = sum(g["over_time"]["gpu_util_pct"]["mean"] for g in a["gpus"]) / len(a["gpus"])
print(f"train: row energy {row['energy_j']:.0f} J vs analysis {ae:.0f} J; utilization {row['util_pct']:.2f} % vs {au:.2f} %")
ok = abs(row["energy_j"] - ae) <= 8 * 2 * 700 and abs(row["util_pct"] - au) <= 5.0
sys.exit(0 if ok else 1)
PY

# The accounting database. The first update needs to know where to begin.
mkdir -p "$work/acct" && chmod 755 "$work/acct"
db=$work/acct/jobs.db
expect_error "the first update asks where to begin" "covers no period yet" \
  "$gpuscope" jobs --update --db "$db" --prometheus "$prom"
# An update the server fails in the middle of: a proxy passes the first batch of two jobs, then
# answers 503 to everything.
proxy_port=$(free_port)
python3 - "$proxy_port" "$prom_port" >"$work/proxy.log" 2>&1 <<'PY' &
import http.server, sys, urllib.parse, urllib.request
port, upstream = int(sys.argv[1]), int(sys.argv[2])
seen = {"discoveries": 0}
class Proxy(http.server.BaseHTTPRequestHandler):
    def relay(self, body):
        query = urllib.parse.parse_qs(body.decode()).get("query", [""])[0] if body else ""
        if query.startswith("count by (slurm_job_id)"):
            seen["discoveries"] += 1
        if seen["discoveries"] >= 2:
            self.send_response(503); self.send_header("Content-Length", "0"); self.end_headers(); return
        req = urllib.request.Request(f"http://127.0.0.1:{upstream}{self.path}", data=body,
                                     headers={"Content-Type": self.headers.get("Content-Type", "")})
        try:
            with urllib.request.urlopen(req) as r:
                data, status = r.read(), r.status
        except urllib.error.HTTPError as e:
            data, status = e.read(), e.code
        self.send_response(status); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    def do_GET(self): self.relay(None)
    def do_POST(self): self.relay(self.rfile.read(int(self.headers.get("Content-Length", 0))))
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()
PY
pids+=($!)
wait_for "the failing proxy" curl -sf "http://127.0.0.1:$proxy_port/api/v1/status/buildinfo"
expect_error "an update the server fails in the middle of stops and says what it kept" \
  "2 jobs were added before it stopped" \
  "$gpuscope" jobs --update --db "$db" --from "$from" --to "$to" --settle 0 --batch 2 \
  --prometheus "http://127.0.0.1:$proxy_port"
check "the first batch is in" "2" "$(sqlite3 "$db" 'SELECT count(*) FROM jobs')"
check "the failed update is recorded" "failed" "$(sqlite3 "$db" 'SELECT status FROM updates ORDER BY id DESC LIMIT 1')"
# The next update resumes where the database's covered time ends, against the server itself.
"$gpuscope" jobs --update --db "$db" --to "$to" --settle 0 --prometheus "$prom" 2>"$work/update.err"
cat "$work/update.err"
check "then every job is in, once" "5 5" "$(sqlite3 -separator ' ' "$db" 'SELECT count(*), count(DISTINCT job_id) FROM jobs')"
check "and counted once in the day sums" "5" "$(sqlite3 "$db" 'SELECT sum(jobs) FROM usage_days')"
"$gpuscope" jobs --update --db "$db" --to "$to" --settle 0 --prometheus "$prom" 2>"$work/update2.err"
check "a second update adds nothing" "yes" "$(grep -q "added 0 jobs" "$work/update2.err" && echo yes)"
check "nor doubles anything" "5 5" "$(sqlite3 -separator ' ' "$db" 'SELECT count(*), (SELECT sum(jobs) FROM usage_days) FROM jobs')"

# The database's rows are the server's rows.
"$gpuscope" jobs --db "$db" --from "$from" --to "$to" --json >"$work/db.json"
python3 - "$work/live.json" "$work/db.json" <<'PY' || failures=$((failures + 1))
import json, sys
live, db = (json.load(open(f)) for f in sys.argv[1:3])
def rows(d): return {j["id"]: j for j in d["jobs"]}
l, k = rows(live), rows(db)
bad = [f"{i}: live {l.get(i)} db {k.get(i)}" for i in sorted(set(l) | set(k)) if l.get(i) != k.get(i)]
if abs(live["total"]["gpu_hours"] - db["total"]["gpu_hours"]) > 1e-9: bad.append("totals differ")
print(f"database rows: {len(k)}, equal to the live rows: {not bad}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# usage sums the rows, from the database and live alike.
for by in user account partition gpu-model day week; do
  "$gpuscope" usage --db "$db" --from "$from" --to "$to" --by "$by" --json >"$work/usage-$by.json"
done
"$gpuscope" usage --from "$from" --to "$to" --by user --prometheus "$prom" --json >"$work/usage-live.json" 2>/dev/null
python3 - "$work" <<'PY' || failures=$((failures + 1))
import json, sys, os
w = sys.argv[1]
rows = json.load(open(f"{w}/db.json"))["jobs"]
bad = []
key = {"user": "user", "account": "account", "partition": "partition", "gpu-model": "gpu_model"}
for by in ("user", "account", "partition", "gpu-model", "day", "week"):
    u = json.load(open(f"{w}/usage-{by}.json"))
    for field in ("gpu_hours", "idle_gpu_hours", "energy_j", "co2_g"):
        total = sum(r[field] or 0 for r in rows)
        if abs(sum(g[field] for g in u["groups"]) - total) > 1e-6 * max(1, total) or abs(u["total"][field] - total) > 1e-6 * max(1, total):
            bad.append(f"--by {by}: {field} does not sum to the rows' {total}")
    if sum(g["jobs"] for g in u["groups"]) != len(rows): bad.append(f"--by {by}: job counts")
    if by in key:
        for g in u["groups"]:
            mine = [r for r in rows if (r[key[by]] or "(none)") == g["group"]]
            if abs(g["gpu_hours"] - sum(r["gpu_hours"] for r in mine)) > 1e-9 or g["jobs"] != len(mine):
                bad.append(f"--by {by} {g['group']}: {g['gpu_hours']} GPU-h, {g['jobs']} jobs")
live = {g["group"]: g for g in json.load(open(f"{w}/usage-live.json"))["groups"]}
db = {g["group"]: g for g in json.load(open(f"{w}/usage-user.json"))["groups"]}
if live.keys() != db.keys() or any(abs(live[k]["gpu_hours"] - db[k]["gpu_hours"]) > 1e-9 or abs(live[k]["energy_j"] - db[k]["energy_j"]) > 1e-6 for k in db):
    bad.append(f"live usage {live} differs from the database's {db}")
print(f"usage: {len(db)} users, sums equal to the rows: {not bad}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
"$gpuscope" usage --db "$db" --from "$from" --to "$to" --by account
"$gpuscope" jobs --db "$db" --from "$from" --to "$to" -o "$work/site.html" 2>"$work/site.err"
check "the site report from the database" "yes" "$(grep -q "wrote $work/site.html (.* MB, 5 jobs)" "$work/site.err" && [ -s "$work/site.html" ] && echo yes)"

# Readers are never blocked: a reader in the middle of a read transaction, an update meanwhile.
python3 - "$db" "$work/reader.ready" <<'PY' &
import sqlite3, sys, time, pathlib
c = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True); c.execute("BEGIN"); c.execute("SELECT count(*) FROM jobs").fetchall()
pathlib.Path(sys.argv[2]).touch(); time.sleep(8); c.rollback()
PY
reader=$!
wait_for "the long reader" test -e "$work/reader.ready"
start_ns=$(date +%s%N)
"$gpuscope" jobs --update --db "$db" --to "$to" --settle 0 --prometheus "$prom" 2>/dev/null
check "an update does not wait for a long reader" "yes" "$( [ $(( ($(date +%s%N) - start_ns) / 1000000000 )) -lt 7 ] && echo yes)"
"$gpuscope" jobs --db "$db" --from "$from" --to "$to" --csv >/dev/null
check "nor does a reader wait for it" "0" "$?"
wait $reader || true

# Who may read it: the file's group. The -wal and -shm files stay, so reading needs no write.
chmod 640 "$db" "$db-wal" "$db-shm"
chgrp root "$db" "$db-wal" "$db-shm"
expect_error "a user outside the file's group is told so" "you may not read the accounting database" \
  runuser -u daemon -- "$gpuscope" jobs --db "$db" --from "$from" --to "$to"
chgrp daemon "$db" "$db-wal" "$db-shm"
runuser -u daemon -- "$gpuscope" jobs --db "$db" --from "$from" --to "$to" --csv >"$work/reader.csv" 2>"$work/reader.err" || cat "$work/reader.err"
check "a user of the file's group reads it" "6" "$(wc -l <"$work/reader.csv")"
# A damaged database says so.
head -c 8192 "$db" >"$work/damaged.db"
head -c 3000 /dev/urandom >>"$work/damaged.db"
expect_error "a damaged database" "cannot read the accounting database" \
  "$gpuscope" jobs --db "$work/damaged.db" --from "$from" --to "$to"
expect_error "a file that is not a database" "file is not a database" \
  "$gpuscope" jobs --db "$work/prometheus-gpuscope.yml" --from "$from" --to "$to"
sqlite3 "$work/other.db" "CREATE TABLE t(x)"
expect_error "a database of another kind" "is not a gpuscope accounting database" \
  "$gpuscope" jobs --db "$work/other.db" --from "$from" --to "$to"

# VictoriaMetrics (serve's pushes, every 250 ms) gives the same jobs and flags, and the same
# energy within 2 %, or within what a scrape at each edge of the window may leave out of a short
# job (0.5 s of a 700 W GPU per GPU): the counter's rise between the window's first and last
# samples.
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "$vm" --json >"$work/vm.json" 2>/dev/null
python3 - "$work/live.json" "$work/vm.json" <<'PY' || failures=$((failures + 1))
import json, sys
p, v = ({j["id"]: j for j in json.load(open(f))["jobs"]} for f in sys.argv[1:3])
bad = [] if p.keys() == v.keys() else [f"jobs {sorted(p)} vs {sorted(v)}"]
for i in p.keys() & v.keys():
    a, b = p[i]["energy_j"], v[i]["energy_j"]
    if a is None or b is None or abs(a - b) > max(0.02 * a, 350 * p[i]["gpus"]):
        bad.append(f"job {i}: energy {a} vs {b}")
    # Prometheus' idle share is a subquery every 2 s: a job of seconds has a few points of it.
    if p[i]["elapsed_s"] >= 10 and p[i]["flags"] != v[i]["flags"]:
        bad.append(f"job {i}: flags {p[i]['flags']} vs {v[i]['flags']}")
print(f"VictoriaMetrics: {len(v)} jobs, energy and flags as Prometheus': {not bad}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# A job the server forgot: its summary kept at its end is read instead; without one, its
# GPU-hours still count and its figures are absent, said.
"$gpuscope" job "$train" --prometheus "$vm" --summary-dir "$work/kept" --keep-summary 2>/dev/null
# A server that never had the jobs (as one whose retention has passed them): a second, empty
# VictoriaMetrics.
empty_port=$(free_port)
victoria-metrics -storageDataPath="$work/vm-empty" -httpListenAddr="127.0.0.1:$empty_port" \
  -loggerLevel=ERROR >"$work/vm-empty.log" 2>&1 &
pids+=($!)
wait_for "the empty VictoriaMetrics" curl -sf "http://127.0.0.1:$empty_port/health"
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "http://127.0.0.1:$empty_port" --summary-dir "$work/kept" --json >"$work/kept.json" 2>/dev/null
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "http://127.0.0.1:$empty_port" --json >"$work/gone.json" 2>/dev/null
python3 - "$work/vm.json" "$work/kept.json" "$work/gone.json" "$train" <<'PY' || failures=$((failures + 1))
import json, sys
v, k, g = ({j["id"]: j for j in json.load(open(f))["jobs"]} for f in sys.argv[1:4])
job = sys.argv[4]
bad = []
if k[job]["source"] != "kept summary" or abs(k[job]["energy_j"] - v[job]["energy_j"]) > 0.05 * v[job]["energy_j"]:
    bad.append(f"kept summary: source {k[job]['source']}, energy {k[job]['energy_j']} vs {v[job]['energy_j']}")
if g[job]["source"] != "none" or g[job]["energy_j"] is not None or g[job]["gpu_hours"] != v[job]["gpu_hours"] or not g[job]["notes"]:
    bad.append(f"gone: {g[job]}")
print(f"kept summary: {k[job]['source']}, {k[job]['energy_j']:.0f} J; gone: {g[job]['source']}, {g[job]['gpu_hours']:.4f} GPU-h, {g[job]['notes']}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
# sacct failing says so.
expect_error "sacct failing" "sacct failed (exit 1)" env GPUSCOPE_SACCT=false \
  "$gpuscope" jobs --from "$from" --to "$to" --prometheus "$prom"
# sacct too slow (slurmdbd overloaded): the update gives up after --sacct-timeout, says so and
# adds nothing; the database still covers what it covered.
printf '#!/bin/sh\nsleep 30\n' >"$work/slow-sacct"
chmod +x "$work/slow-sacct"
covered_before=$(sqlite3 -readonly "$db" "SELECT max(covered_until_ms) FROM updates")
jobs_before=$(sqlite3 -readonly "$db" "SELECT count(*) FROM jobs")
started=$(date +%s)
expect_error "sacct too slow" "sacct did not answer within 2 s" \
  env GPUSCOPE_SACCT="$work/slow-sacct" "$gpuscope" jobs --update --db "$db" --settle 0 \
  --overlap 86400 --sacct-timeout 2 --prometheus "$prom"
check "a slow sacct is given up on in time" "yes" "$( (($(date +%s) - started < 20)) && echo yes)"
check "a slow sacct leaves the covered time" "$covered_before" \
  "$(sqlite3 -readonly "$db" "SELECT max(covered_until_ms) FROM updates")"
check "a slow sacct adds no job" "$jobs_before" "$(sqlite3 -readonly "$db" "SELECT count(*) FROM jobs")"

# jobstats' exporter names jobs in nvidia_gpu_jobId only: the same jobs, found by it, and their
# energy from mean power (it has no counter) within 5 % of gpuscope serve's counter.
"$gpuscope" jobs --from "$from" --to "$to" --prometheus "http://127.0.0.1:$jobstats_port" --json \
  >"$work/jobstats.json" 2>"$work/jobstats.err" || cat "$work/jobstats.err"
python3 - "$work/live.json" "$work/jobstats.json" <<'PY' || failures=$((failures + 1))
import json, sys
p, j = ({r["id"]: r for r in json.load(open(f))["jobs"]} for f in sys.argv[1:3])
bad = [] if p.keys() == j.keys() else [f"jobs {sorted(p)} vs {sorted(j)}"]
for i in p.keys() & j.keys():
    a, b = p[i]["energy_j"], j[i]["energy_j"]
    if b is None or abs(a - b) > max(0.05 * a, 350 * p[i]["gpus"]): bad.append(f"job {i}: energy {a} vs {b}")
    if len(j[i].get("gpu_rows", [])) != p[i]["gpus"]: bad.append(f"job {i}: {len(j[i].get('gpu_rows', []))} GPUs")
    if p[i]["elapsed_s"] >= 10 and p[i]["flags"] != j[i]["flags"]:
        bad.append(f"job {i}: flags {p[i]['flags']} vs {j[i]['flags']}")
print(f"jobstats' exporter: {len(j)} jobs, as gpuscope serve's: {not bad}")
for b in bad: print("FAIL:", b)
sys.exit(1 if bad else 0)
PY

echo "$failures failed"
[ $failures -eq 0 ]

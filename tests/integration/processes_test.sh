#!/usr/bin/env bash
# Which processes used each GPU, against real processes: the simulated driver is told, through
# GPUSCOPE_SIM_PROCESSES_FILE, to report pids the test chooses, and gpuscope resolves them
# through the real /proc:
#  - the profiled job's own process is in the job (in_job 1), with its command and user;
#  - a process started outside gpuscope is not (in_job 0), and analyze says so as a diagnosis;
#  - a process with Open MPI's variables in its environment is recorded with its rank;
#  - a pid that does not exist is a row with NULL identity (in_job NULL), not an error;
#  - (root) processes in cgroups the test creates with the paths of a Kubernetes pod and of a
#    SLURM step are resolved to the pod UID and container id, the SLURM job and step;
#  - serve exports per-process series and puts the pod's labels on the GPU's series;
#  - (root) on a GPU in MIG mode, serve lists each process under its instance and labels each
#    instance's series with the pod or SLURM job that runs in it.
# Usage: processes_test.sh GPUSCOPE_BINARY
set -euo pipefail
gpuscope=$1
work=$(mktemp -d /tmp/gpuscope-processes-test.XXXXXX)
pids=()
cgroups=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for dir in "${cgroups[@]}"; do
    # Innermost first: a cgroup directory goes only when it is empty.
    while [ "$dir" != "/sys/fs/cgroup/pids" ] && rmdir "$dir" 2>/dev/null; do dir=$(dirname "$dir"); done
  done
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
sql() { sqlite3 "$1" "$2"; }

export GPUSCOPE_SIM_STATE=$work/sim-state.json
export GPUSCOPE_SIM_PROCESSES_FILE=$work/processes.txt
: >"$GPUSCOPE_SIM_PROCESSES_FILE"

# A process outside the job, and one that says it is rank 3 of an mpirun of 4.
sleep 60 &
outsider=$!
pids+=("$outsider")
env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=1 sleep 60 &
ranked=$!
pids+=("$ranked")
{
  echo "# gpu pid used_mib"
  echo "0 $outsider 1024"
  echo "0 $ranked 256"
  echo "0 4194000 64"  # no such process
} >>"$GPUSCOPE_SIM_PROCESSES_FILE"

# (root) Processes in cgroups shaped as a Kubernetes pod's container and a SLURM step's.
pod_uid=1b2c3d4e-0000-4000-8000-00000000abcd
container_id=$(printf 'ab%.0s' {1..32})
pod_cgroup=/sys/fs/cgroup/pids/kubepods/burstable/pod$pod_uid/$container_id
slurm_cgroup=/sys/fs/cgroup/pids/slurm/uid_0/job_777/step_0/task_0
in_cgroups=no
if [ "$(id -u)" -eq 0 ] && mkdir -p "$pod_cgroup" 2>/dev/null && mkdir -p "$slurm_cgroup" 2>/dev/null; then
  cgroups+=("$pod_cgroup" "$slurm_cgroup")
  sleep 60 &
  podded=$!
  pids+=("$podded")
  sleep 60 &
  slurmed=$!
  pids+=("$slurmed")
  echo "$podded" >"$pod_cgroup/cgroup.procs"
  echo "$slurmed" >"$slurm_cgroup/cgroup.procs"
  echo "0 $podded 4096" >>"$GPUSCOPE_SIM_PROCESSES_FILE"
  echo "0 $slurmed 128" >>"$GPUSCOPE_SIM_PROCESSES_FILE"
  in_cgroups=yes
else
  echo "note: not root or no cgroup v1 pids hierarchy here: the cgroup checks are skipped"
fi

# 1. profile: the job names its own process to the driver, as a CUDA job would appear.
"$gpuscope" profile --simulate h100 -q -s 50 --process-sampling-ms 200 -o "$work/run.db" -- \
  sh -c 'echo "0 $$ 300" >>"$GPUSCOPE_SIM_PROCESSES_FILE"; sleep 1.5'
db=$work/run.db
job_pid=$(sql "$db" "SELECT pid FROM processes WHERE command = 'sh'")
check "the job's process was seen" "1" "$(sql "$db" "SELECT count(*) FROM processes WHERE command = 'sh'")"
check "the job's process is in the job" "1" "$(sql "$db" "SELECT in_job FROM processes WHERE pid = $job_pid")"
check "the job's user" "$(id -un)" "$(sql "$db" "SELECT user FROM processes WHERE pid = $job_pid")"
check "its memory" "314572800" "$(sql "$db" "SELECT max(used_memory_bytes) FROM process_samples WHERE pid = $job_pid")"
check "the outsider is not in the job" "0|sleep" "$(sql "$db" "SELECT in_job, command FROM processes WHERE pid = $outsider")"
check "the ranked process's rank" "openmpi|3|1" "$(sql "$db" "SELECT launcher, rank, local_rank FROM processes WHERE pid = $ranked")"
check "a pid that does not exist is kept, unknown" "||" "$(sql "$db" "SELECT command, in_job, user FROM processes WHERE pid = 4194000")"
looks=$(sql "$db" "SELECT count(DISTINCT mono_ns) FROM process_samples WHERE pid = $outsider")
[ "$looks" -ge 4 ] && echo "ok: $looks looks at 200 ms" || { echo "FAIL: only $looks looks"; failures=$((failures + 1)); }
if [ $in_cgroups = yes ]; then
  check "the pod's process" "$pod_uid|$container_id|kubernetes" \
    "$(sql "$db" "SELECT pod_uid, container_id, container_runtime FROM processes WHERE pid = $podded")"
  check "the SLURM step's process" "777|0" "$(sql "$db" "SELECT slurm_job_id, slurm_step FROM processes WHERE pid = $slurmed")"
fi

# 2. analyze: the processes per GPU and the diagnosis of those outside the job.
"$gpuscope" analyze "$db" >"$work/analyze.txt"
grep -q "Processes on the GPUs" "$work/analyze.txt" && echo "ok: analyze lists the processes" || { echo "FAIL: no processes section"; failures=$((failures + 1)); }
grep -q "was also used by .* outside this job" "$work/analyze.txt" && echo "ok: the diagnosis names the outsiders" || { echo "FAIL: no diagnosis"; cat "$work/analyze.txt"; failures=$((failures + 1)); }
"$gpuscope" analyze --json "$db" >"$work/analyze.json"
check "analyze --json: the finding" "1" "$(grep -c '"foreign_process"' "$work/analyze.json" || true)"
grep -q "\"pid\": $outsider" "$work/analyze.json" && echo "ok: analyze --json lists the outsider" || { echo "FAIL: outsider missing from --json"; failures=$((failures + 1)); }

# 3. serve: per-process series, and the GPU's series labelled with the workload using it.
# An ephemeral port the kernel hands out, and a generous wait: CI runs this beside
# image builds, and a fixed 10 s window once came up empty.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$gpuscope" serve --simulate h100 --listen 127.0.0.1:$port --interval 200 --process-sampling-ms 200 \
  2>"$work/serve.log" &
serve=$!
pids+=("$serve")
page=""
for _ in $(seq 300); do
  page=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
  if grep -q "gpuscope_process_memory_used_bytes{.*pid=\"$outsider\"" <<<"$page"; then break; fi
  kill -0 "$serve" 2>/dev/null || break
  sleep 0.2
done
grep -q "gpuscope_process_memory_used_bytes{.*pid=\"$outsider\",command=\"sleep\"" <<<"$page" && echo "ok: serve exports the outsider's memory" || {
  echo "FAIL: no process series"
  echo "$page" | grep process
  echo "serve's log:"
  cat "$work/serve.log"
  failures=$((failures + 1))
}
if [ $in_cgroups = yes ]; then
  grep -q "^gpuscope_power_watts{.*pod=\"$pod_uid\",container=\"${container_id:0:12}\"" <<<"$page" && echo "ok: the GPU's series carry the pod using it" || { echo "FAIL: no pod label"; echo "$page" | grep power_watts; failures=$((failures + 1)); }
fi
kill "$serve"
wait "$serve" || true

# 4. (root) serve on a GPU in MIG mode: each process under the instance it runs in, and each
#    instance's series labelled with its own workload, the pod's on one, the SLURM job's on another.
if [ $in_cgroups = yes ]; then
  mig_scenario=$(cd "$(dirname "$0")/../fixtures/scenarios" && pwd)/h100-mig-mixed.json
  mig_processes=$work/mig-processes.txt
  printf '0 %s 1024 3\n0 %s 512 7\n' "$podded" "$slurmed" >"$mig_processes"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  GPUSCOPE_SIM_PROCESSES_FILE=$mig_processes "$gpuscope" serve --simulate "$mig_scenario" \
    --listen 127.0.0.1:$port --interval 200 --process-sampling-ms 200 2>"$work/serve-mig.log" &
  serve=$!
  pids+=("$serve")
  page=""
  for _ in $(seq 300); do
    page=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
    if grep -q "^gpuscope_sm_active_ratio{.*gpu_instance_id=\"7\".*slurm_job_id=" <<<"$page"; then break; fi
    kill -0 "$serve" 2>/dev/null || break
    sleep 0.2
  done
  grep -q "gpuscope_process_memory_used_bytes{.*gpu_instance_id=\"3\".*pid=\"$podded\"" <<<"$page" \
    && echo "ok: serve lists the pod's process under its MIG instance" \
    || { echo "FAIL: the pod's process is not under GI 3"; echo "$page" | grep process_memory; failures=$((failures + 1)); }
  grep -q "^gpuscope_sm_active_ratio{.*gpu_instance_id=\"3\".*pod=\"$pod_uid\"" <<<"$page" \
    && echo "ok: the instance's series carry the pod using it" \
    || { echo "FAIL: no pod label on GI 3"; echo "$page" | grep sm_active_ratio; cat "$work/serve-mig.log"; failures=$((failures + 1)); }
  grep -q "^gpuscope_sm_active_ratio{.*gpu_instance_id=\"7\".*slurm_job_id=\"777\"" <<<"$page" \
    && echo "ok: another instance's series carry the SLURM job using it" \
    || { echo "FAIL: no SLURM job label on GI 7"; echo "$page" | grep sm_active_ratio; failures=$((failures + 1)); }
  grep -q "^gpuscope_sm_active_ratio{.*gpu_instance_id=\"1\".*\(pod\|slurm_job_id\)=" <<<"$page" \
    && { echo "FAIL: GI 1 carries another instance's workload"; failures=$((failures + 1)); } \
    || echo "ok: an instance without those processes carries neither"
  kill "$serve"
  wait "$serve" || true
fi

echo "$failures failed"
[ $failures -eq 0 ]

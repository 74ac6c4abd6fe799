#!/usr/bin/env bash
# gpuscope under a real SLURM cluster (two emulated nodes on this machine):
#  - srun -N 2 -n 4 gpuscope profile writes one database per rank, each with its rank's SLURM
#    fields, into the directory given with -o;
#  - the default output name is gpuscope-<job>.<step>/<node>.rank<r>.db;
#  - --per-node leaves one database per node;
#  - gpuscope merge combines the per-rank files;
#  - the distributed analysis (srun -N 2 -n 3 gpuscope analyze --partial DIR) of the rank files,
#    its tasks on both nodes, prints the same JSON as one gpuscope analyze of them, byte for byte;
#  - each task's process is attributed to its SLURM job and rank (processes table);
#  - accounting answers: sacct knows a finished two-node job, a running one (End Unknown), a
#    failed and a cancelled one, with SLURM's own formats;
#  - GRES GPUs: --gpus-per-node / --gres hand out GPUs (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS) and
#    sacct's AllocTRES counts them;
#  - slurm-cluster.sh stop leaves no daemon running (munged, slurmdbd and MariaDB included).
# Usage: slurm_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) when SLURM is not installed.
set -euo pipefail
gpuscope=$1
root=$2
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the SLURM cluster needs root (munged, slurmd)"; exit 77; fi
work=$(mktemp -d /tmp/gpuscope-slurm-test.XXXXXX)
cluster=$work/cluster
cleanup() {
  "$root/scripts/slurm-cluster.sh" stop "$cluster" || true
  rm -rf "$work" 2>/dev/null || true
}
trap cleanup EXIT

munged_before=$(pgrep -x munged || true)
set +e
exports=$("$root/scripts/slurm-cluster.sh" start 2 "$cluster")
status=$?
set -e
if [ $status -eq 77 ]; then echo "SKIP: SLURM is not installed"; exit 77; fi
[ $status -eq 0 ] || { echo "FAIL: could not start the SLURM cluster"; cat "$cluster"/log/* || true; exit 1; }
eval "$exports"

failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
sql() { sqlite3 "$1" "$2"; }

export GPUSCOPE_SIM_STATE=$work/sim-state.json
unset CUDA_VISIBLE_DEVICES

# 1. One database per rank in a directory.
srun -N 2 -n 4 --chdir "$work" "$gpuscope" profile --simulate h100x4-straggler -q -s 50 \
  -o "$work/out/" -- sleep 1
files=$(cd "$work/out" && ls | sort | tr '\n' ' ')
check "one file per rank" "n1.rank0.db n1.rank1.db n2.rank2.db n2.rank3.db " "$files"
job=$(sql "$work/out/n1.rank0.db" "SELECT slurm_job_id FROM runs")
for f in "$work"/out/*.db; do
  name=$(basename "$f" .db)
  node=${name%%.rank*}
  rank=${name##*.rank}
  check "$name rank" "$rank" "$(sql "$f" "SELECT slurm_rank FROM runs")"
  check "$name node" "$node" "$(sql "$f" "SELECT slurm_node_name FROM runs")"
  check "$name job" "$job" "$(sql "$f" "SELECT slurm_job_id FROM runs")"
  check "$name ntasks" "4" "$(sql "$f" "SELECT slurm_ntasks FROM runs")"
  check "$name status" "finished" "$(sql "$f" "SELECT status FROM runs")"
  check "$name sampled 4 GPUs" "4" "$(sql "$f" "SELECT count(DISTINCT device_index) FROM samples")"
done
check "local ranks on n2" "0 1 " "$(for r in 2 3; do sql "$work/out/n2.rank$r.db" "SELECT slurm_local_rank FROM runs"; done | tr '\n' ' ')"

# 2. merge combines them.
"$gpuscope" merge "$work/merged.db" "$work/out"
check "merged runs" "4" "$(sql "$work/merged.db" "SELECT count(*) FROM runs")"
check "merged ranks" "0,1,2,3" "$(sql "$work/merged.db" "SELECT group_concat(slurm_rank) FROM (SELECT slurm_rank FROM runs ORDER BY 1)")"
total=0
for f in "$work"/out/*.db; do total=$((total + $(sql "$f" "SELECT count(*) FROM samples"))); done
check "merged samples" "$total" "$(sql "$work/merged.db" "SELECT count(*) FROM samples")"

# 2b. The distributed analysis: three tasks on two nodes, their task numbers from srun, meet in a
# directory both nodes see; task 0 prints what one analyze prints.
"$gpuscope" analyze --json "$work/out" >"$work/single.json"
srun -N 2 -n 3 --chdir "$work" "$gpuscope" analyze --json --partial "$work/parts" "$work/out" \
  >"$work/distributed.json"
check "distributed analysis equals one analyze" "same" \
  "$(cmp -s "$work/single.json" "$work/distributed.json" && echo same || echo different)"
check "each task left its part" "part-0-of-3.bin part-1-of-3.bin part-2-of-3.bin " \
  "$(cd "$work/parts" && ls part-* | tr '\n' ' ')"
check "the distributed analysis has every GPU" "16" \
  "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["gpus"]))' "$work/distributed.json")"

# 3. The default name: gpuscope-<job>.<step>/<node>.rank<r>.db in the working directory.
mkdir -p "$work/default"
srun -N 2 -n 2 --chdir "$work/default" "$gpuscope" profile --simulate h100 -q -- true
dir=$(cd "$work/default" && ls -d gpuscope-*)
check "default files" "n1.rank0.db n2.rank1.db " "$(cd "$work/default/$dir" && ls | sort | tr '\n' ' ')"
check "default directory names job and step" "gpuscope-$(sql "$work/default/$dir/n1.rank0.db" "SELECT slurm_job_id || '.' || slurm_step_id FROM runs")" "$dir"

# 4. --per-node: only local rank 0 of each node samples.
srun -N 2 -n 4 --chdir "$work" "$gpuscope" profile --simulate h100x4-straggler -q --per-node \
  -o "$work/pernode/%h.db" -- true
check "per-node files" "n1.db n2.db " "$(cd "$work/pernode" && ls | sort | tr '\n' ' ')"

# 5. Which process used the GPU: each task names its own process to the simulated driver; the
#    processes table has it with SLURM's job id (from its environment) and the launcher's rank,
#    in the job; one task's database also sees the other task's process, of the same job.
export GPUSCOPE_SIM_PROCESSES_FILE=$work/processes.txt
: >"$GPUSCOPE_SIM_PROCESSES_FILE"
srun -N 1 -n 2 --chdir "$work" "$gpuscope" profile --simulate h100 -q -s 50 --process-sampling-ms 200 \
  -o "$work/procs/%r.db" -- sh -c 'echo "0 $$ 100" >>"$GPUSCOPE_SIM_PROCESSES_FILE"; sleep 1.5'
unset GPUSCOPE_SIM_PROCESSES_FILE
procs_job=$(sql "$work/procs/0.db" "SELECT slurm_job_id FROM runs")
check "both tasks' processes seen by rank 0" "2" "$(sql "$work/procs/0.db" "SELECT count(*) FROM processes WHERE command = 'sh'")"
check "their SLURM job, rank and in_job" "$procs_job|0|1 $procs_job|1|1 " \
  "$(sql "$work/procs/0.db" "SELECT slurm_job_id, rank, in_job FROM processes WHERE command = 'sh' ORDER BY rank" | tr '\n' ' ')"
check "their launcher" "slurm" "$(sql "$work/procs/1.db" "SELECT DISTINCT launcher FROM processes WHERE command = 'sh'")"

# 6. The job's exit status comes back through srun.
set +e
srun -N 1 -n 1 "$gpuscope" profile --simulate h100 -q -o "$work/fail.db" -- sh -c 'exit 5'
status=$?
set -e
check "exit status through srun" "5" "$status"

# 7. Accounting: sacct answers for finished, running, failed and cancelled jobs. Records reach
#    slurmdbd a moment after the job ends, so each check polls (at most 30 s) for its state.
acct() { sacct -j "$1" -X -n -P -o JobIDRaw,State,Start,End,NodeList,AllocTRES,ElapsedRaw; }
wait_state() {  # wait_state JOB STATE: polls until the job's state starts with STATE
  for _ in $(seq 1 300); do
    case "$(sacct -j "$1" -X -n -P -o State 2>/dev/null)" in "$2"*) return 0 ;; esac
    sleep 0.1
  done
}
time_re='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$'
two=$(srun -N 2 -n 2 --gpus-per-node=2 --chdir "$work" sh -c \
  'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES" >"gpus.$SLURMD_NODENAME"; [ "$SLURM_PROCID" = 0 ] && echo "$SLURM_JOB_ID"; true')
check "GPUs handed out on n1 and n2" "n1 0,1|n2 0,1" "$(cat "$work/gpus.n1")|$(cat "$work/gpus.n2")"
wait_state "$two" COMPLETED
IFS='|' read -r id state start end nodelist tres elapsed <<<"$(acct "$two")"
check "finished job's id" "$two" "$id"
check "finished job's state" "COMPLETED" "$state"
check "finished job's nodes (compressed)" "n[1-2]" "$nodelist"
check "finished job's start and end are ISO times" "yes yes" \
  "$([[ $start =~ $time_re ]] && echo yes) $([[ $end =~ $time_re ]] && echo yes)"
check "finished job's end is not before its start" "yes" "$([[ ! $end < $start ]] && echo yes)"
check "finished job's AllocTRES" "billing=2,cpu=2,gres/gpu=4,node=2" "$tres"
check "finished job's ElapsedRaw is whole seconds" "yes" "$([[ $elapsed =~ ^[0-9]+$ ]] && echo yes)"

running=$(sbatch --parsable -o /dev/null -w n1 --gres=gpu:1 --chdir "$work" \
  --wrap 'echo "$SLURM_JOB_GPUS" >job_gpus; sleep 120')
wait_state "$running" RUNNING
IFS='|' read -r id state start end nodelist tres elapsed <<<"$(acct "$running")"
check "running job's state and end" "RUNNING Unknown n1" "$state $end $nodelist"
check "running job's GPU in AllocTRES" "billing=1,cpu=1,gres/gpu=1,node=1" "$tres"
for _ in $(seq 1 100); do [ -s "$work/job_gpus" ] && break; sleep 0.1; done
check "batch job's SLURM_JOB_GPUS" "0" "$(cat "$work/job_gpus" 2>/dev/null)"
scancel "$running"
wait_state "$running" CANCELLED
check "cancelled job's state" "CANCELLED by 0" "$(acct "$running" | cut -d'|' -f2)"

failed=$(sbatch --parsable -o /dev/null -w n2 --wrap 'exit 3')
wait_state "$failed" FAILED
check "failed job's state and exit code" "FAILED|3:0|n2" \
  "$(sacct -j "$failed" -X -n -P -o State,ExitCode,NodeList)"

# 8. stop ends every daemon that start began, munged included (it used to be left running).
daemons=$(cat "$cluster"/*.pid | tr '\n' ' ')
"$root/scripts/slurm-cluster.sh" stop "$cluster"
alive=""
for pid in $daemons; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid($(cat /proc/$pid/comm 2>/dev/null))"; done
check "no daemon left after stop" "" "$alive"
if [ -z "$munged_before" ]; then
  check "the munged that start began is stopped" "" "$(pgrep -x munged || true)"
fi

echo "$failures failed"
[ $failures -eq 0 ]

#!/usr/bin/env bash
# gpuscope under a real Open MPI mpirun (Debian's openmpi-bin), on simulated GPUs, one node:
#  - four ranks with the default output name write four distinct files (once the second rank
#    refused "exists; use -f"), in gpuscope-openmpi-<job>/;
#  - each file holds its rank, world size, local rank and Open MPI's job id; with four GPUs and
#    four ranks each rank samples the GPU of its local rank;
#  - the job's exit status comes back through mpirun;
#  - --per-node leaves one file, sampling every GPU;
#  - merge combines the ranks and analyze --json sees four ranks;
#  - torchrun's and MPICH/Intel MPI's (PMI) variables, set by the test, are read the same way.
# Usage: mpirun_test.sh GPUSCOPE_BINARY. Exit 77 (skip) when mpirun is not installed.
set -euo pipefail
gpuscope=$(realpath "$1")
if ! command -v mpirun >/dev/null; then echo "SKIP: mpirun is not installed (openmpi-bin)"; exit 77; fi
work=$(mktemp -d /tmp/gpuscope-mpirun-test.XXXXXX)
trap 'rm -rf "$work"' EXIT

failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
sql() { sqlite3 "$1" "$2"; }

export GPUSCOPE_SIM_STATE=$work/sim-state.json
unset CUDA_VISIBLE_DEVICES SLURM_JOB_ID
# --allow-run-as-root: CI runs as root; --oversubscribe: four ranks whatever the core count.
mpirun_args=(--allow-run-as-root --oversubscribe --bind-to none)
host=$(hostname -s)

# 1. Four ranks, default names.
mkdir -p "$work/default"
(cd "$work/default" && mpirun "${mpirun_args[@]}" -np 4 "$gpuscope" profile \
  --simulate h100x4-straggler -q -s 50 -- sleep 1)
dir=$(cd "$work/default" && ls -d gpuscope-openmpi-* 2>/dev/null || true)
check "one job directory" "1" "$(echo "$dir" | grep -c . || true)"
check "one file per rank" "$host.rank0.db $host.rank1.db $host.rank2.db $host.rank3.db " \
  "$(cd "$work/default/$dir" && ls | sort | tr '\n' ' ')"
job=$(sql "$work/default/$dir/$host.rank0.db" "SELECT launcher_job_id FROM runs")
check "the directory names Open MPI's job" "gpuscope-openmpi-$job" "$dir"
for r in 0 1 2 3; do
  f=$work/default/$dir/$host.rank$r.db
  check "rank $r context" "openmpi|$job|$r|4|$r|4" \
    "$(sql "$f" "SELECT launcher, launcher_job_id, rank, world_size, local_rank, local_world_size FROM runs")"
  check "rank $r samples the GPU of its local rank" "$r" "$(sql "$f" "SELECT group_concat(DISTINCT device_index) FROM samples")"
  check "rank $r finished" "finished|0" "$(sql "$f" "SELECT status, exit_code FROM runs")"
done

# 2. The exit status comes back through mpirun (Open MPI returns the first non-zero status).
set +e
mpirun "${mpirun_args[@]}" -np 2 "$gpuscope" profile --simulate h100 -q -o "$work/fail.%r.db" -- \
  sh -c 'exit 5' 2>/dev/null
status=$?
set -e
check "exit status through mpirun" "5" "$status"

# 3. --per-node: local rank 0 samples every GPU, the others only run.
mpirun "${mpirun_args[@]}" -np 4 "$gpuscope" profile --simulate h100x4-straggler -q -s 50 \
  --per-node -o "$work/pernode/%h.db" -- sleep 0.5
check "per-node files" "$host.db " "$(cd "$work/pernode" && ls | sort | tr '\n' ' ')"
check "per-node samples all GPUs" "4" "$(sql "$work/pernode/$host.db" "SELECT count(DISTINCT device_index) FROM samples")"

# 4. merge and analyze see four ranks.
"$gpuscope" merge "$work/merged.db" "$work/default/$dir"
check "merged ranks" "0,1,2,3" "$(sql "$work/merged.db" "SELECT group_concat(rank) FROM (SELECT rank FROM runs ORDER BY 1)")"
"$gpuscope" analyze --json "$work/merged.db" >"$work/analysis.json"
check "analyze --json: four openmpi runs" "4" "$(grep -c '"launcher": "openmpi"' "$work/analysis.json" || true)"
"$gpuscope" analyze "$work/merged.db" >"$work/analysis.txt"
grep -q "rank 3/4 (openmpi, local 3)" "$work/analysis.txt" && echo "ok: analyze names the ranks" || { echo "FAIL: analyze text"; head -8 "$work/analysis.txt"; failures=$((failures + 1)); }

# 5. torchrun's variables (no PyPI here: set as torchrun sets them), two ranks at once.
mkdir -p "$work/torch"
for r in 0 1; do
  (cd "$work/torch" && env RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 \
    TORCHELASTIC_RUN_ID=ddp-17 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
    "$gpuscope" profile --simulate h100 -q -- sleep 0.5) &
done
wait
check "torchrun files" "$host.rank0.db $host.rank1.db " "$(cd "$work/torch/gpuscope-torchrun-ddp-17" && ls | sort | tr '\n' ' ')"
check "torchrun context" "torchrun|ddp-17|1|2" \
  "$(sql "$work/torch/gpuscope-torchrun-ddp-17/$host.rank1.db" "SELECT launcher, launcher_job_id, rank, world_size FROM runs")"

# 6. MPICH/Hydra and Intel MPI (PMI): no job id, so the rank goes in the file name.
mkdir -p "$work/pmi"
for r in 0 1; do
  (cd "$work/pmi" && env PMI_RANK=$r PMI_SIZE=2 MPI_LOCALRANKID=$r MPI_LOCALNRANKS=2 \
    "$gpuscope" profile --simulate h100 -q -- sleep 0.5) &
done
wait
check "pmi files" "2" "$(cd "$work/pmi" && ls gpuscope-"$host"-*.rank[01].db | wc -l)"

# 7. A shared explicit file is still refused before anything runs.
set +e
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 "$gpuscope" profile --simulate h100 -q \
  -o "$work/shared.db" -- true 2>"$work/shared.err"
status=$?
set -e
check "a shared file for 4 ranks is a usage error" "2" "$status"
grep -q "would make all 4 ranks write the same file" "$work/shared.err" && echo "ok: says why" || { echo "FAIL: $(cat "$work/shared.err")"; failures=$((failures + 1)); }

echo "$failures failed"
[ $failures -eq 0 ]

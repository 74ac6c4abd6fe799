# What the shell tests against a real SLURM cluster share; `source` it after setting `root` (the
# repository) and `work` (the test's folder). It sets `cluster` ($work/cluster) and `pids` (the
# test's background servers), stops both at exit, and gives:
#   wait_for DESCRIPTION COMMAND...   polls COMMAND until it succeeds, at most WAIT_FOR_S (120) s
#   check DESCRIPTION EXPECTED ACTUAL counts a mismatch in `failures`
#   start_cluster NODES [EXTRA_CONF]  scripts/slurm-cluster.sh start (skips, exit 77, without
#                                     SLURM), its environment exported, the nodes idle
#   add_users ACCOUNTS USER=ACCOUNT... accounts and users made with sacctmgr
# A test adds its own lines to the failure's report with `on_failure() { ...; }`.
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"  # free_port

cluster=$work/cluster
pids=()
failures=0
on_failure() { :; }
slurm_env_cleanup() {
  if [ "$1" != 0 ]; then
    on_failure || true
    if [ -d "$cluster/log" ]; then tail -n 20 "$cluster"/log/slurmctld.log; fi
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  "$root/scripts/slurm-cluster.sh" stop "$cluster" || true
  rm -rf "$work" 2>/dev/null || true
}
trap 'slurm_env_cleanup $?' EXIT

wait_for() {
  local what=$1; shift
  for _ in $(seq 1 $((${WAIT_FOR_S:-120} * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "FAIL: $what never happened"; return 1
}

check() {
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}

start_cluster() {
  local nodes=$1 exports status
  set +e
  exports=$(GPUSCOPE_SLURM_EXTRA_CONF="${2:-}" "$root/scripts/slurm-cluster.sh" start "$nodes" "$cluster")
  status=$?
  set -e
  if [ $status -eq 77 ]; then echo "SKIP: SLURM is not installed"; exit 77; fi
  [ $status -eq 0 ] || { echo "FAIL: could not start the SLURM cluster"; cat "$cluster"/log/* || true; exit 1; }
  eval "$exports"
  nodes_idle() { [ "$(sinfo -h -t idle -o '%D' | head -1)" = "$nodes" ]; }
  wait_for "the nodes idle" nodes_idle
}

# Users are added while slurmctld is down: Debian 12's slurmctld crashes on the association
# update slurmdbd sends it when a second user is added while it runs; started again, it reads
# them from slurmdbd.
add_users() {
  local accounts=$1 pair nodes
  shift
  nodes=$(sinfo -h -o '%D' | head -1)
  scontrol shutdown slurmctld >/dev/null
  ctld_down() { ! scontrol ping >/dev/null 2>&1; }
  wait_for "slurmctld stopping" ctld_down
  sacctmgr -i add account "$accounts" >/dev/null
  for pair in "$@"; do sacctmgr -i add user "${pair%%=*}" account="${pair#*=}" >/dev/null; done
  slurmctld
  wait_for "slurmctld again" scontrol ping
  nodes_idle() { [ "$(sinfo -h -t idle -o '%D' | head -1)" = "$nodes" ]; }
  wait_for "the nodes idle" nodes_idle
}

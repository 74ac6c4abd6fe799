#!/usr/bin/env bash
# A real SLURM cluster of N emulated nodes (n1..nN) on this one machine, for tests: Debian's
# slurm-wlm and munge, everything under DIR (/etc/slurm is not touched), one slurmd per node on
# ports BASE_PORT+1.., with accounting (slurmdbd over a private MariaDB, so `sacct` answers) and
# four GRES GPUs per node (gpu:4, dummy device files under DIR). Needs root.
#   slurm-cluster.sh start [NODES] [DIR]   prints `export SLURM_CONF=...` for eval
#   slurm-cluster.sh stop [DIR]         ends slurmctld, the slurmds, slurmdbd, the MariaDB server
#                                       and a munged that start began
# Env (ports): GPUSCOPE_SLURM_BASE_PORT (default 17000), GPUSCOPE_SLURMCTLD_PORT (16817),
# GPUSCOPE_SLURMDBD_PORT (16819), GPUSCOPE_SLURM_DB_PORT (16806, MariaDB on 127.0.0.1).
# GPUSCOPE_SLURM_EXTRA_CONF: lines added to slurm.conf (a MailProg, another partition).
set -euo pipefail
cmd=${1:-start}
if [ "$cmd" = start ]; then nodes=${2:-2}; dir=${3:-/tmp/gpuscope-slurm}; else dir=${2:-/tmp/gpuscope-slurm}; fi
base_port=${GPUSCOPE_SLURM_BASE_PORT:-17000}
ctld_port=${GPUSCOPE_SLURMCTLD_PORT:-16817}
dbd_port=${GPUSCOPE_SLURMDBD_PORT:-16819}
db_port=${GPUSCOPE_SLURM_DB_PORT:-16806}
cluster=gpuscope-test
gpus_per_node=4

# Polls `$@` every 0.1 s until it succeeds, for at most SECONDS; returns 1 when it never did.
wait_for() {
  local seconds=$1
  shift
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -ge $deadline ] && return 1
    sleep 0.1
  done
}

if [ "$cmd" = stop ]; then
  pids=()
  for f in "$dir"/*.pid; do
    [ -f "$f" ] && pids+=("$(cat "$f")")
  done
  [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null
  # Wait for the daemons to go, so the caller can remove DIR and reuse the ports at once. One
  # still there after 5 s (a slurmd finishing a job step on a loaded machine was seen) is killed.
  for attempt in $(seq 1 70); do
    alive=()
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive+=("$pid"); done
    [ ${#alive[@]} -eq 0 ] && break
    [ "$attempt" -eq 50 ] && kill -KILL "${alive[@]}" 2>/dev/null
    sleep 0.1
  done
  exit 0
fi

for tool in slurmctld slurmd slurmdbd sacct sacctmgr munged srun mariadbd mariadb; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "slurm-cluster: $tool is not installed (scripts/setup.sh installs it)" >&2; exit 77; }
done

mkdir -p "$dir"/{state,log,spool,db,dev} /run/munge /var/log/munge /var/lib/munge /etc/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
touch /var/log/munge/munged.log && chown munge:munge /var/log/munge/munged.log
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
fi
# A munged that was already running (the machine's own) is left alone; one started here is
# recorded in DIR so that `stop` ends it too.
if ! munge -n >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged
  wait_for 5 munge -n || true
  if [ -s /run/munge/munged.pid ]; then cp /run/munge/munged.pid "$dir/munged.pid"; fi
fi

host=$(hostname)
# slurmctld and slurmd find each other by this name.
if ! getent hosts "$host" >/dev/null; then
  echo "slurm-cluster: the host name '$host' does not resolve; add '127.0.1.1 $host' to /etc/hosts" >&2
  exit 1
fi

# A private MariaDB for slurmdbd (Debian's mariadb-server-core: the server without the
# machine's service): its own datadir, socket, pid file and port under DIR, no option file read
# (--no-defaults), so the machine's own MariaDB, if any, is not touched. It runs without grant
# tables (no mariadb-install-db: 0.5 s instead of 3 s), so any user may connect, which is why
# it listens on 127.0.0.1 only.
start_database() {
  /usr/sbin/mariadbd --no-defaults --user=root --datadir="$dir/db" --socket="$dir/db.sock" \
    --pid-file="$dir/mariadbd.pid" --bind-address=127.0.0.1 --port="$db_port" \
    --log-error="$dir/log/mariadbd.log" --skip-grant-tables --skip-name-resolve \
    --innodb-buffer-pool-size=32M --innodb-log-file-size=8M --innodb-doublewrite=0 \
    --innodb-flush-log-at-trx-commit=0 </dev/null >/dev/null 2>&1 &
  wait_for 60 mariadb --no-defaults --socket="$dir/db.sock" -e 'SELECT 1' || {
    echo "slurm-cluster: the MariaDB server did not start; see $dir/log/mariadbd.log" >&2
    exit 1
  }
}

# slurmdbd finds slurmdbd.conf beside $SLURM_CONF; it must be the SlurmUser's and mode 600.
start_slurmdbd() {
  {
    echo "AuthType=auth/munge"
    echo "DbdHost=localhost"
    echo "DbdPort=$dbd_port"
    echo "SlurmUser=root"
    echo "PidFile=$dir/slurmdbd.pid"
    echo "LogFile=$dir/log/slurmdbd.log"
    echo "StorageType=accounting_storage/mysql"
    echo "StorageHost=127.0.0.1"
    echo "StoragePort=$db_port"
    echo "StorageUser=slurm"
    echo "StoragePass=unused"
    echo "StorageLoc=slurm_acct_db"
  } > "$dir/slurmdbd.conf"
  chown root:root "$dir/slurmdbd.conf"
  chmod 600 "$dir/slurmdbd.conf"
  slurmdbd
  # It creates its tables before it answers; then the cluster is registered (its root
  # association too, which root's jobs are recorded under).
  wait_for 90 sacctmgr -n list cluster || {
    echo "slurm-cluster: slurmdbd did not answer; see $dir/log/slurmdbd.log" >&2
    exit 1
  }
  sacctmgr -i add cluster "$cluster" >/dev/null
}

# GRES GPUs: gpu:4 per node, backed by device files under DIR standing for /dev/nvidia0..3.
# slurmd wants character devices; these are all the null device (1,3), harmless to open.
# With task/none nothing opens them: SLURM only hands out their indices (CUDA_VISIBLE_DEVICES).
write_gres_conf() {
  for k in $(seq 0 $((gpus_per_node - 1))); do
    rm -f "$dir/dev/nvidia$k"
    mknod -m 666 "$dir/dev/nvidia$k" c 1 3
  done
  {
    echo "AutoDetect=off"
    echo "NodeName=n[1-$nodes] Name=gpu File=$dir/dev/nvidia[0-$((gpus_per_node - 1))]"
  } > "$dir/gres.conf"
}

cpus=$(nproc)
{
  echo "ClusterName=$cluster"
  echo "SlurmctldHost=$host"
  echo "SlurmctldPort=$ctld_port"
  echo "AuthType=auth/munge"
  echo "ProctrackType=proctrack/linuxproc"
  echo "TaskPlugin=task/none"
  echo "MpiDefault=none"
  echo "SlurmUser=root"
  echo "SlurmdUser=root"
  echo "StateSaveLocation=$dir/state"
  echo "SlurmdSpoolDir=$dir/spool/%n"
  echo "SlurmctldPidFile=$dir/slurmctld.pid"
  echo "SlurmdPidFile=$dir/slurmd.%n.pid"
  echo "SlurmctldLogFile=$dir/log/slurmctld.log"
  echo "SlurmdLogFile=$dir/log/slurmd.%n.log"
  echo "SchedulerType=sched/builtin"
  echo "SelectType=select/cons_tres"
  echo "SelectTypeParameters=CR_Core"
  echo "ReturnToService=2"
  echo "AccountingStorageType=accounting_storage/slurmdbd"
  echo "AccountingStorageHost=localhost"
  echo "AccountingStoragePort=$dbd_port"
  echo "AccountingStorageTRES=gres/gpu"
  echo "JobAcctGatherType=jobacct_gather/none"
  echo "GresTypes=gpu"
  for i in $(seq 1 "$nodes"); do
    echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base_port + i)) CPUs=$cpus RealMemory=1000 Gres=gpu:$gpus_per_node State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
  if [ -n "${GPUSCOPE_SLURM_EXTRA_CONF:-}" ]; then printf '%s\n' "$GPUSCOPE_SLURM_EXTRA_CONF"; fi
} > "$dir/slurm.conf"
write_gres_conf
export SLURM_CONF=$dir/slurm.conf
start_database
start_slurmdbd
slurmctld
wait_for 10 scontrol ping || true
for i in $(seq 1 "$nodes"); do mkdir -p "$dir/spool/n$i" && slurmd -N "n$i"; done
nodes_idle() { [ "$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)" = "$nodes" ]; }
if ! wait_for 30 nodes_idle; then
  echo "slurm-cluster: nodes did not come up; see $dir/log" >&2
  sinfo >&2 || true
  exit 1
fi
echo "export SLURM_CONF=$dir/slurm.conf"

#!/usr/bin/env bash
# A real SLURM cluster of N emulated nodes (n1..nN) on this one machine, for tests: Debian's
# slurm-wlm and munge, everything under DIR (/etc/slurm is not touched), one slurmd per node on
# ports BASE_PORT+1.. Needs root.
#   slurm-cluster.sh start [NODES] [DIR]   prints `export SLURM_CONF=...` for eval
#   slurm-cluster.sh stop [DIR]         ends slurmctld, the slurmds and a munged that start began
# Env: GPUSCOPE_SLURM_BASE_PORT (default 17000), GPUSCOPE_SLURMCTLD_PORT (default 16817).
set -euo pipefail
cmd=${1:-start}
if [ "$cmd" = start ]; then nodes=${2:-2}; dir=${3:-/tmp/gpuscope-slurm}; else dir=${2:-/tmp/gpuscope-slurm}; fi
base_port=${GPUSCOPE_SLURM_BASE_PORT:-17000}
ctld_port=${GPUSCOPE_SLURMCTLD_PORT:-16817}

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

for tool in slurmctld slurmd munged srun; do
  command -v "$tool" >/dev/null || { echo "slurm-cluster: $tool is not installed (scripts/setup.sh installs it)" >&2; exit 77; }
done

mkdir -p "$dir"/{state,log,spool} /run/munge /var/log/munge /var/lib/munge /etc/munge
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
  for _ in $(seq 1 20); do munge -n >/dev/null 2>&1 && break; sleep 0.25; done
  if [ -s /run/munge/munged.pid ]; then cp /run/munge/munged.pid "$dir/munged.pid"; fi
fi

host=$(hostname)
# slurmctld and slurmd find each other by this name.
if ! getent hosts "$host" >/dev/null; then
  echo "slurm-cluster: the host name '$host' does not resolve; add '127.0.1.1 $host' to /etc/hosts" >&2
  exit 1
fi
cpus=$(nproc)
{
  echo "ClusterName=gpuscope-test"
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
  for i in $(seq 1 "$nodes"); do
    echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base_port + i)) CPUs=$cpus RealMemory=1000 State=UNKNOWN"
  done
  echo "PartitionName=debug Nodes=n[1-$nodes] Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8"
} > "$dir/slurm.conf"
export SLURM_CONF=$dir/slurm.conf
slurmctld
for _ in $(seq 1 40); do scontrol ping >/dev/null 2>&1 && break; sleep 0.25; done
for i in $(seq 1 "$nodes"); do slurmd -N "n$i"; done
for _ in $(seq 1 60); do
  idle=$(sinfo -h -t idle -o '%D' 2>/dev/null | head -1)
  [ "${idle:-0}" = "$nodes" ] && break
  sleep 0.5
done
if [ "${idle:-0}" != "$nodes" ]; then
  echo "slurm-cluster: nodes did not come up; see $dir/log" >&2
  sinfo >&2 || true
  exit 1
fi
echo "export SLURM_CONF=$dir/slurm.conf"

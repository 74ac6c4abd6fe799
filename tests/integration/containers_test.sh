#!/usr/bin/env bash
# gpuscope profile -- podman run …, for real (podman with runc, a busybox image imported from a
# tarball: no registry):
#  - the container's exit status passes through, and --capture-output stores its stdout and
#    stderr lines;
#  - SIGTERM and SIGINT to gpuscope stop the container (nothing left in `podman ps -a`) at once;
#  - the container's process, named to the simulated driver, is resolved to its container id and
#    runtime from its cgroup, and counted as the job's (it was started by the job's podman);
#  - analyze reads the result.
# Usage: containers_test.sh GPUSCOPE_BINARY REPO_ROOT. Exit 77 (skip) when podman cannot run here.
set -euo pipefail
gpuscope=$(realpath "$1")
root=$2
. "$root/tests/integration/podman_env.sh"
podman_ready || exit $?
podman_image

work=$(mktemp -d /tmp/gpuscope-containers-test.XXXXXX)
names=()
cleanup() {
  for name in "${names[@]}"; do podman rm -f "$name" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
sql() { sqlite3 "$1" "$2"; }
export GPUSCOPE_SIM_STATE=$work/sim-state.json

# 1. Exit status and captured output.
set +e
"$gpuscope" profile --simulate h100 -q -s 50 --capture-output -o "$work/exit.db" -- \
  podman run --rm "${podman_run_args[@]}" "$podman_image_name" \
  sh -c 'echo "hello from the container"; echo "a warning" >&2; exit 3' >"$work/exit.out" 2>&1
status=$?
set -e
check "the container's exit status" "3" "$status"
check "stored as the run's" "finished|3" "$(sql "$work/exit.db" "SELECT status, exit_code FROM runs")"
check "its stdout line" "1" "$(sql "$work/exit.db" "SELECT count(*) FROM output WHERE stream = 'stdout' AND line = 'hello from the container'")"
check "its stderr line" "1" "$(sql "$work/exit.db" "SELECT count(*) FROM output WHERE stream = 'stderr' AND line = 'a warning'")"

# 2. A signal to gpuscope stops the container. The container's process is named to the driver.
export GPUSCOPE_SIM_PROCESSES_FILE=$work/processes.txt
stop_with() {  # stop_with SIGNAL NAME
  local signal=$1 name=$2 pid="" started
  names+=("$name")
  : >"$GPUSCOPE_SIM_PROCESSES_FILE"
  "$gpuscope" profile --simulate h100 -q -s 50 --process-sampling-ms 200 -o "$work/$name.db" -- \
    podman run --rm --name "$name" "${podman_run_args[@]}" "$podman_image_name" sleep 60 &
  local gpuscope_pid=$!
  for _ in $(seq 100); do
    pid=$(container_pid "$name")
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "FAIL: $name never ran"; failures=$((failures + 1)); return; }
  echo "0 $pid 512" >"$GPUSCOPE_SIM_PROCESSES_FILE"
  sleep 1  # a few looks at the processes
  started=$(date +%s%N)
  kill -"$signal" "$gpuscope_pid"
  set +e
  wait "$gpuscope_pid"
  status=$?
  set -e
  local took_ms=$((($(date +%s%N) - started) / 1000000))
  check "$signal: podman's status comes back" "$((128 + $(kill -l "$signal")))" "$status"
  [ "$took_ms" -lt 10000 ] && echo "ok: $signal stopped it in $took_ms ms" || { echo "FAIL: $signal took $took_ms ms"; failures=$((failures + 1)); }
  check "$signal: no container left" "" "$(podman ps -a --filter "name=^$name\$" --format '{{.Names}}')"
  local id
  id=$(sql "$work/$name.db" "SELECT container_id FROM processes WHERE pid = $pid")
  check "$signal: the container's process has its id" "64" "${#id}"
  check "$signal: and its runtime, and is the job's" "podman|1" \
    "$(sql "$work/$name.db" "SELECT container_runtime, in_job FROM processes WHERE pid = $pid")"
}
stop_with TERM "gpuscope-test-term-$$"
stop_with INT "gpuscope-test-int-$$"
unset GPUSCOPE_SIM_PROCESSES_FILE

# 3. analyze reads it, with the container in the processes section and no outsider diagnosed.
"$gpuscope" analyze "$work/gpuscope-test-term-$$.db" >"$work/analyze.txt"
grep -q "podman [0-9a-f]\{12\}" "$work/analyze.txt" && echo "ok: analyze names the container" || { echo "FAIL: analyze"; cat "$work/analyze.txt"; failures=$((failures + 1)); }
if grep -q "outside this job" "$work/analyze.txt"; then echo "FAIL: the job's container taken for an outsider"; failures=$((failures + 1)); else echo "ok: not an outsider"; fi

echo "$failures failed"
[ $failures -eq 0 ]

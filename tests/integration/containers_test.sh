#!/usr/bin/env bash
# gpuscope profile -- podman run …, for real (podman with runc, a busybox image imported from a
# tarball: no registry):
#  - the container's exit status passes through, and --capture-output stores its stdout and
#    stderr lines;
#  - SIGTERM and SIGINT to gpuscope, and Ctrl-C at a terminal, stop the container (nothing left in
#    `podman ps -a`) at once; the run is 'finished' with podman's 143/130 (podman exits, it is not
#    killed);
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
#    How: gpuscope forwards SIGTERM/SIGINT to the job's process group, i.e. to the podman client;
#    podman (--sig-proxy, on by default) passes it to the container through the runtime (runc
#    kill), catatonit (--init) to `sleep`, which dies of it; conmon records 128 + S, the client
#    exits with that code and --rm removes the container. So podman *exits* with 143/130, it is
#    not killed: the run is 'finished' with exit code 128 + S and no term_signal, not 'signaled'.
#    Ctrl-C at a terminal is different: gpuscope hands the terminal to the job's process group, so
#    the terminal's SIGINT goes to podman directly and gpuscope sees no signal at all; `tty-INT`
#    runs gpuscope in the foreground of a pseudo-terminal (script(1)) and types ^C into it.
export GPUSCOPE_SIM_PROCESSES_FILE=$work/processes.txt
stop_with() {  # stop_with TERM|INT|tty-INT NAME
  local how=$1 name=$2 pid="" started signal=${1#tty-}
  local code=$((128 + $(kill -l "$signal")))
  local command=("$gpuscope" profile --simulate h100 -q -s 50 --process-sampling-ms 200
    -o "$work/$name.db" -- podman run --rm --name "$name" "${podman_run_args[@]}"
    "$podman_image_name" sleep 60)
  names+=("$name")
  : >"$GPUSCOPE_SIM_PROCESSES_FILE"
  if [ "$how" = tty-INT ]; then
    rm -f "$work/tty-input"
    mkfifo "$work/tty-input"
    # script -e: its status is the command's; exec: gpuscope leads the terminal's session.
    script -qefc "exec $(printf '%q ' "${command[@]}")" /dev/null <"$work/tty-input" >"$work/$name.tty" 2>&1 &
    exec 3>"$work/tty-input"
  else
    "${command[@]}" &
  fi
  local job=$!
  for _ in $(seq 100); do
    pid=$(container_pid "$name")
    [ -n "$pid" ] && break
    sleep 0.1
  done
  if [ -z "$pid" ]; then
    echo "FAIL: $how: $name never ran"
    failures=$((failures + 1))
    kill "$job" 2>/dev/null || true
    [ "$how" = tty-INT ] && exec 3>&-
    return
  fi
  echo "0 $pid 512" >"$GPUSCOPE_SIM_PROCESSES_FILE"
  sleep 1  # a few looks at the processes
  started=$(date +%s%N)
  if [ "$how" = tty-INT ]; then printf '\003' >&3; else kill -"$signal" "$job"; fi
  set +e
  wait "$job"
  status=$?
  set -e
  [ "$how" = tty-INT ] && exec 3>&-
  local took_ms=$((($(date +%s%N) - started) / 1000000))
  check "$how: podman's status comes back" "$code" "$status"
  [ "$took_ms" -lt 10000 ] && echo "ok: $how stopped it in $took_ms ms" || { echo "FAIL: $how took $took_ms ms"; failures=$((failures + 1)); }
  check "$how: no container left" "" "$(podman ps -a --filter "name=^$name\$" --format '{{.Names}}')"
  check "$how: the run (podman exited, it was not killed)" "finished|$code|" \
    "$(sql "$work/$name.db" "SELECT status, exit_code, term_signal FROM runs")"
  if [ "$how" = tty-INT ]; then
    check "$how: the terminal's SIGINT went to the job, not to gpuscope" "0" \
      "$(sql "$work/$name.db" "SELECT count(*) FROM events WHERE kind = 'signal'")"
  else
    check "$how: forwarded by gpuscope" "SIG$signal forwarded to the job" \
      "$(sql "$work/$name.db" "SELECT detail FROM events WHERE kind = 'signal'")"
  fi
  local id
  id=$(sql "$work/$name.db" "SELECT container_id FROM processes WHERE pid = $pid")
  check "$how: the container's process has its id" "64" "${#id}"
  check "$how: and its runtime, and is the job's" "podman|1" \
    "$(sql "$work/$name.db" "SELECT container_runtime, in_job FROM processes WHERE pid = $pid")"
}
stop_with TERM "gpuscope-test-term-$$"
stop_with INT "gpuscope-test-int-$$"
stop_with tty-INT "gpuscope-test-tty-$$"
unset GPUSCOPE_SIM_PROCESSES_FILE

# 3. analyze reads it, with the container in the processes section and no outsider diagnosed.
"$gpuscope" analyze "$work/gpuscope-test-term-$$.db" >"$work/analyze.txt"
grep -q "podman [0-9a-f]\{12\}" "$work/analyze.txt" && echo "ok: analyze names the container" || { echo "FAIL: analyze"; cat "$work/analyze.txt"; failures=$((failures + 1)); }
if grep -q "outside this job" "$work/analyze.txt"; then echo "FAIL: the job's container taken for an outsider"; failures=$((failures + 1)); else echo "ok: not an outsider"; fi

echo "$failures failed"
[ $failures -eq 0 ]

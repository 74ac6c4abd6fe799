#!/usr/bin/env bash
# gpuscope's container image, built here without a registry (deploy/image/build-image.sh) and run
# with podman (the same runc and ulimit flags as the container tests):
#  - it is under 60 MB;
#  - `devices --simulate h100` lists the simulated H100 (the image carries the simulated driver);
#  - the default command serves /metrics on a loopback-published port;
#  - `profile` writes a run database to a mounted volume, as the non-root user, and passes the
#    job's exit status through.
# Usage: image_test.sh BUILD_DIR REPO_ROOT. Exit 77 (skip) without root, podman or mmdebstrap.
set -euo pipefail
build_dir=$(realpath "$1")
root=$2
. "$root/tests/integration/podman_env.sh"
podman_ready || exit $?
if ! command -v mmdebstrap >/dev/null; then echo "SKIP: mmdebstrap is not installed"; exit 77; fi
work=$(mktemp -d /tmp/gpuscope-image-test.XXXXXX)
name=gpuscope-image-test-$$
cleanup() {
  podman rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
# The sandbox's flags, without --init (gpuscope is the entry point) and --network none (serve).
run_args=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

BUILD_DIR=$build_dir IMAGE=localhost/gpuscope-test-image bash "$root/deploy/image/build-image.sh"
image=localhost/gpuscope-test-image:latest
size=$(podman image inspect --format '{{.Size}}' "$image")
[ "$size" -lt 60000000 ] && echo "ok: the image is $((size / 1000000)) MB" || { echo "FAIL: the image is $((size / 1000000)) MB"; failures=$((failures + 1)); }

devices=$(podman run --rm "${run_args[@]}" --network none "$image" devices --simulate h100)
grep -q "NVIDIA H100" <<<"$devices" && echo "ok: devices --simulate h100" || { echo "FAIL: devices: $devices"; failures=$((failures + 1)); }

port=$((20000 + RANDOM % 20000))
podman run -d --name "$name" "${run_args[@]}" -p "127.0.0.1:$port:9400" "$image" \
  serve --simulate h100 --listen 0.0.0.0:9400 >/dev/null
page=""
for _ in $(seq 50); do
  page=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
  grep -q "^gpuscope_power_watts" <<<"$page" && break
  sleep 0.2
done
grep -q "^gpuscope_power_watts{gpu=\"0\"" <<<"$page" && echo "ok: serve answers /metrics on the published port" || { echo "FAIL: no metrics"; podman logs "$name" | tail -5; failures=$((failures + 1)); }
podman rm -f "$name" >/dev/null

mkdir -p "$work/out" && chmod 777 "$work/out"
set +e
podman run --rm "${run_args[@]}" --network none -v "$work/out:/out" "$image" \
  profile --simulate h100 -q -o /out/run.db -- sh -c 'sleep 0.5; exit 4'
status=$?
set -e
check "the job's exit status" "4" "$status"
check "the run database" "finished|4|h100" "$(sqlite3 "$work/out/run.db" "SELECT status, exit_code, scenario FROM runs")"
check "written as nobody" "65534" "$(stat -c %u "$work/out/run.db")"

echo "$failures failed"
[ $failures -eq 0 ]

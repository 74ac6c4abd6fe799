#!/usr/bin/env bash
# gpuscope's container image, built here from the source without a registry (deploy/image/
# build-image.sh: both Debian 12 bases with mmdebstrap, then the two-stage Containerfile) and run
# with podman (the same runc and ulimit flags as the container tests):
#  - it is under 60 MB, and its gpuscope says the checkout's version and revision;
#  - `devices --simulate h100` lists the simulated H100 (the image carries the simulated driver);
#  - the default command serves /metrics on a loopback-published port;
#  - `profile` writes a run database to a mounted volume, as the non-root user, and passes the
#    job's exit status through;
#  - report writes a PNG plot in it (PLplot's cairo driver and a font are in the image);
#  - the Kubernetes Job's way (deploy/kubernetes/profile/job.yaml, its commands read from the
#    manifest): the init container's gpuscope-bundle fills a volume, and the training container's
#    command profiles a job in another image that has no glibc at all (busybox only), with the
#    pod's downward-API variables recorded in the run, and the job's environment left alone;
#  - the exporter DaemonSet's security decision (deploy/kubernetes/exporter/daemonset.yaml): in
#    the host's pid namespace, as root with only DAC_READ_SEARCH and SYS_PTRACE and a read-only
#    root, serve names another user's process's pod and namespace (from its environ); with either
#    capability alone, or as nobody without any, it exports the process without them.
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

IMAGE=localhost/gpuscope-test-image bash "$root/deploy/image/build-image.sh"
image=localhost/gpuscope-test-image:latest
size=$(podman image inspect --format '{{.Size}}' "$image")
[ "$size" -lt 60000000 ] && echo "ok: the image is $((size / 1000000)) MB" || { echo "FAIL: the image is $((size / 1000000)) MB"; failures=$((failures + 1)); }
revision=$(git -C "$root" rev-parse --short HEAD)
version=$(sed -n 's/^project(gpuscope VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
check "the image's gpuscope --version" "$version ($revision)" \
  "$(podman run --rm "${run_args[@]}" --network none "$image" --version | awk '{print $2, $3}')"

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

# TLS and basic authentication in the image: its run-time libraries are there (loaded on demand).
mkdir -p "$work/tls"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/tls/key.pem" -out "$work/tls/cert.pem" \
  -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
chmod 644 "$work/tls/key.pem"  # read by the image's user; a test key
hash=$(python3 -W ignore -c 'import crypt; print(crypt.crypt("pw", crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))')
printf 'tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\nbasic_auth_users:\n  p: %s\n' \
  "$hash" >"$work/tls/web.yml"
port=$((20000 + RANDOM % 20000))
podman run -d --name "$name" "${run_args[@]}" -p "127.0.0.1:$port:9400" -v "$work/tls:/tls:ro" \
  "$image" serve --simulate h100 --listen 0.0.0.0:9400 --web-config /tls/web.yml >/dev/null
page=""
for _ in $(seq 50); do
  page=$(curl -sf --cacert "$work/tls/cert.pem" -u p:pw "https://127.0.0.1:$port/metrics" || true)
  grep -q "^gpuscope_power_watts" <<<"$page" && break
  sleep 0.2
done
grep -q "^gpuscope_power_watts{gpu=\"0\"" <<<"$page" && echo "ok: serve answers over TLS with basic auth" || { echo "FAIL: no metrics over TLS"; podman logs "$name" | tail -5; failures=$((failures + 1)); }
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

podman run --rm "${run_args[@]}" --network none -v "$work/out:/out" "$image" \
  report -o /out/plot.png /out/run.db >/dev/null
check "a PNG plot made in the image" "89504e47" "$(head -c 4 "$work/out/plot-timeseries.png" | od -An -tx1 | tr -d ' \n')"

# The Job's commands, as the manifest has them.
read_manifest() {
  /usr/bin/python3 - "$root/deploy/kubernetes/profile/job.yaml" "$1" <<'PY'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))["spec"]["template"]["spec"]
container = spec["initContainers"][0] if sys.argv[2] == "init" else spec["containers"][0]
print("\n".join(container["command"]))
PY
}
mapfile -t init_command < <(read_manifest init)
mapfile -t train_command < <(read_manifest train)
mkdir -p "$work/bundle" "$work/runs" && chmod 777 "$work/bundle" "$work/runs"
podman run --rm "${run_args[@]}" --network none -v "$work/bundle:/gpuscope" \
  --entrypoint "${init_command[0]}" "$image" "${init_command[@]:1}"
# The training container: the manifest's command up to "--" (with a simulated H100 and -q), then
# a job that shows its environment and fails with 3. The image is the container tests' busybox.
profile=()
for word in "${train_command[@]}"; do
  [ "$word" = "--" ] && break
  profile+=("$word")
  [ "$word" = profile ] && profile+=(--simulate h100 -q)
done
podman_image
set +e
podman run --rm "${run_args[@]}" --network none --hostname train-gpuscope-x7k2p \
  -v "$work/bundle:/gpuscope:ro" -v "$work/runs:/out" \
  -e KUBERNETES_SERVICE_HOST=10.96.0.1 -e POD_NAMESPACE=ml -e NODE_NAME=gpu-node-3 \
  "$podman_image_name" "${profile[@]}" -- sh -c 'env > /out/job-env; sleep 0.3; exit 3'
status=$?
set -e
check "the bundled gpuscope passes the job's exit status" "3" "$status"
check "its run, named after the pod" "finished|3|train-gpuscope-x7k2p|ml|gpu-node-3" \
  "$(sqlite3 "$work/runs/train-gpuscope-x7k2p.db" "SELECT status, exit_code, pod_name, pod_namespace, node_name FROM runs" 2>&1)"
check "the job's environment has no bundled library path" "0" "$(grep -c '^LD_' "$work/runs/job-env" || true)"

# The DaemonSet's security context, with podman's equivalents.
sleeper_env=(env -i POD_NAME=trainer-0 POD_NAMESPACE=ml PATH=/usr/bin:/bin)
setpriv --reuid 1000 --regid 1000 --clear-groups "${sleeper_env[@]}" sleep 120 &
sleeper=$!
mkdir -p "$work/procs" && echo "0 $sleeper 2048" >"$work/procs/list"
exported_pod() {  # exported_pod USER [CAPABILITY...]: the pod label of the sleeper's series
  local user=$1 caps=() cap
  shift
  for cap in "$@"; do caps+=(--cap-add "$cap"); done
  local port=$((20000 + RANDOM % 20000))
  podman run -d --name "$name" "${run_args[@]}" --pid host --read-only --user "$user" \
    --cap-drop ALL "${caps[@]}" -v "$work/procs:/procs:ro" \
    -e GPUSCOPE_SIM_PROCESSES_FILE=/procs/list -p "127.0.0.1:$port:9400" "$image" \
    serve --simulate h100 --listen 0.0.0.0:9400 --interval 200 --process-sampling-ms 200 >/dev/null
  local line=""
  for _ in $(seq 50); do
    line=$(curl -sf "http://127.0.0.1:$port/metrics" | grep "^gpuscope_process_memory_used_bytes{.*pid=\"$sleeper\"" || true)
    [ -n "$line" ] && break
    sleep 0.2
  done
  podman rm -f "$name" >/dev/null
  if [ -z "$line" ]; then echo "no series"; return; fi
  sed -n 's/.*pod="\([^"]*\)",namespace="\([^"]*\)".*/\1 \2/p' <<<"$line" | grep . || echo "no pod"
}
check "the DaemonSet's exporter (root, DAC_READ_SEARCH, SYS_PTRACE) names the pod" "trainer-0 ml" \
  "$(exported_pod 0 DAC_READ_SEARCH SYS_PTRACE)"
# Each capability alone is not enough: both are needed (the kernel's ptrace check for environ,
# and the file's 0400 mode), and nobody without any gets the process without its pod.
check "root with SYS_PTRACE alone: no pod" "no pod" "$(exported_pod 0 SYS_PTRACE)"
check "root with DAC_READ_SEARCH alone: no pod" "no pod" "$(exported_pod 0 DAC_READ_SEARCH)"
check "without the capabilities, nobody exports the process without its pod" "no pod" \
  "$(exported_pod 65534)"
kill "$sleeper" 2>/dev/null || true

echo "$failures failed"
[ $failures -eq 0 ]

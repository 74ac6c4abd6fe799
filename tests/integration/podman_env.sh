# Sourced by the container tests: can podman run a container here, and a tiny local image to run.
#   podman_ready            returns 0, or prints "SKIP: why" and returns 77
#   podman_image            builds localhost/gpuscope-test:latest from busybox-static, without a
#                           registry (a rootfs tarball given to `podman import`); fast when it exists
#   podman_run_args         the flags every `podman run` of the tests takes (array)
#   container_pid NAME      the host pid of a running container's main process (empty until it runs)
# Root is needed: rootless podman wants subuids and a user session the CI machine does not have.

podman_image_name=localhost/gpuscope-test:latest

# Flags this sandbox needs and that are harmless elsewhere:
#  --runtime runc: Debian 12's podman would pick crun when installed; runc is what works here.
#  --ulimit nofile/nproc: the sandbox's own limits are above what the runtime may set for a
#    container, so podman's defaults (copied from them) are refused; explicit values are not.
#  --init: catatonit as PID 1 forwards signals to the command; a plain `sleep` as PID 1 would
#    ignore SIGTERM (PID 1 has no default signal actions) and the container would never stop.
#  --network none: the tests need no network, and so no CNI plugins or slirp4netns.
podman_run_args=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --init --network none)

podman_ready() {
  if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the container tests need root (rootless podman needs subuids)"; return 77; fi
  if ! command -v podman >/dev/null; then echo "SKIP: podman is not installed (scripts/setup.sh installs it)"; return 77; fi
  if ! command -v busybox >/dev/null; then echo "SKIP: busybox is not installed (busybox-static)"; return 77; fi
  if ! podman info >/dev/null 2>&1; then
    echo "SKIP: podman cannot run here: $(podman info 2>&1 | tail -1)"
    return 77
  fi
  return 0
}

podman_image() {
  if podman image exists "$podman_image_name"; then return 0; fi
  local rootfs
  rootfs=$(mktemp -d /tmp/gpuscope-rootfs.XXXXXX)
  mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/tmp" "$rootfs/etc"
  cp "$(command -v busybox)" "$rootfs/bin/busybox"
  local tool
  for tool in sh sleep echo cat true false env kill ls trap; do ln -sf busybox "$rootfs/bin/$tool"; done
  tar -C "$rootfs" -cf "$rootfs.tar" .
  podman import --change 'ENV PATH=/bin' "$rootfs.tar" "$podman_image_name" >/dev/null
  local status=$?
  rm -rf "$rootfs" "$rootfs.tar"
  return $status
}

container_pid() {
  local pid
  pid=$(podman inspect --format '{{.State.Pid}}' "$1" 2>/dev/null) || return 0
  [ -n "$pid" ] && [ "$pid" != 0 ] && echo "$pid"
  return 0
}

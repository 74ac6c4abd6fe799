# Sourced by the container tests: can podman run a container here, and a tiny local image to run.
#   podman_ready            returns 0, or prints "SKIP: why" and returns 77 (not root, no podman or
#                           busybox, or a trial container of the image with podman_run_args fails)
#   podman_image            builds localhost/gpuscope-test:latest from busybox-static, without a
#                           registry (a rootfs tarball given to `podman import`); fast when it exists
#   podman_run_args         the flags every `podman run` of the tests takes (array)
#   container_pid NAME      the host pid of a running container's main process (empty until it runs;
#                           with --init that is catatonit, "podman-init", and the command is its child)
# Root is needed: rootless podman wants subuids and a user session the CI machine does not have.
# Packages (scripts/setup.sh, installed without recommends): podman (its dependencies bring conmon
# and containernetworking-plugins), runc, catatonit (--init) and busybox-static (the image). Not
# needed as root: uidmap, slirp4netns, fuse-overlayfs (the overlay driver is the kernel's).
# Nothing else is needed either: without systemd podman picks the cgroupfs cgroup manager and the
# file events backend by itself, and the default storage (/var/lib/containers) works.

podman_image_name=localhost/gpuscope-test:latest

# Flags this sandbox needs and that are harmless elsewhere:
#  --runtime runc: the runtime scripts/setup.sh installs; Debian 12's podman prefers crun when
#    that is installed too, so this pins the one the tests were checked with.
#  --ulimit nofile/nproc: a rootful podman gives a container RLIMIT_NOFILE 1048576 and a huge
#    RLIMIT_NPROC by default; raising a hard limit needs CAP_SYS_RESOURCE, which a sandboxed or
#    unprivileged-container CI machine drops, and runc then fails with "error setting rlimits for
#    ready process: ... operation not permitted". Values below the machine's hard limits are
#    always allowed.
#  --init: catatonit as PID 1 forwards signals to the command; a plain `sleep` as PID 1 would
#    ignore SIGTERM (PID 1 has no default signal actions) and the container would never stop.
#  --network none: the tests need no network. Not needed here (the CNI bridge works), but it spares
#    each container a bridge and iptables rules, and works where those are missing or forbidden.
podman_run_args=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 --init --network none)

podman_ready() {
  if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the container tests need root (rootless podman needs subuids)"; return 77; fi
  if ! command -v podman >/dev/null; then echo "SKIP: podman is not installed (scripts/setup.sh installs it)"; return 77; fi
  if ! command -v busybox >/dev/null; then echo "SKIP: busybox is not installed (busybox-static)"; return 77; fi
  if ! podman info >/dev/null 2>&1; then
    echo "SKIP: podman cannot run here: $(podman info 2>&1 | tail -1)"
    return 77
  fi
  # podman info works where no container can start (runtime, cgroups, rlimits): try one.
  local error
  if ! error=$(podman_image 2>&1); then
    echo "SKIP: cannot import the test image: $(echo "$error" | tail -1)"
    return 77
  fi
  if ! error=$(podman run --rm "${podman_run_args[@]}" "$podman_image_name" true 2>&1); then
    echo "SKIP: podman cannot run a container here: $(echo "$error" | tail -1)"
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
  for tool in sh sleep echo cat true false env kill ls ps printf test; do ln -sf busybox "$rootfs/bin/$tool"; done
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

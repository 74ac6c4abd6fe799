#!/usr/bin/env bash
# Proves the README's "Build and test" on a truly fresh Debian 12: makes a minimal root filesystem
# (mmdebstrap --variant=minbase bookworm), clones this repository into it and runs the README's
# commands there as root through chroot: apt-get install git ca-certificates, git clone, cd,
# scripts/setup.sh, ctest. Prints the verdict, the time each step took and the disk used.
#
# Usage: scripts/fresh-debian.sh [DIR]   (DIR: where to make the root; default a new folder under
#        /var/tmp, removed at the end unless GPUSCOPE_FRESH_KEEP=1)
# Needs: root (mount, chroot), mmdebstrap (installed when missing), the Debian archive and the
# npm registry.
# Clones the committed HEAD of this checkout (uncommitted changes are not part of the test).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "fresh-debian: needs root (it mounts /proc, /sys and /dev into a chroot)" >&2
  exit 1
fi
if ! command -v mmdebstrap >/dev/null; then
  apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$(mktemp -d /var/tmp/gpuscope-fresh.XXXXXX)}
keep=${GPUSCOPE_FRESH_KEEP:-0}
log=${GPUSCOPE_FRESH_LOG:-$root.log}
mounts=()

cleanup() {
  # Unmount in reverse order; the root stays for inspection when asked to.
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R -l "${mounts[i]}" 2>/dev/null || true; done
  # munged and slurm daemons started by the tests inside the chroot would keep it busy.
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    if [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$root" ]; then kill -9 "$pid" 2>/dev/null || true; fi
  done
  if [ "$keep" != 1 ] && [ -d "$root" ]; then rm -rf --one-file-system "$root"; fi
}
trap cleanup EXIT

step() { echo "fresh-debian: $(date -u +%H:%M:%S) $*"; }

start=$(date +%s)
if [ ! -x "$root/bin/bash" ]; then
  step "mmdebstrap --variant=minbase bookworm $root"
  mmdebstrap --quiet --variant=minbase bookworm "$root" >"$log" 2>&1
fi
made=$(date +%s)

# What a fresh machine has that a chroot lacks: name resolution and this host's extra CA
# certificates (a proxy's; the chroot installs ca-certificates itself, as the README says).
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "127.0.0.1 localhost $(hostname)" >"$root/etc/hosts"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
# /sys recursively: slurmd needs the cgroup file system mounted under it.
for m in proc sys dev dev/pts dev/shm; do
  mkdir -p "$root/$m"
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    sys) mount --rbind /sys "$root/sys" && mount --make-rslave "$root/sys" ;;
    *) mount --bind "/$m" "$root/$m" ;;
  esac
  mounts+=("$root/$m")
done
# The clone's source: a bare copy of this checkout's committed HEAD (a worktree's .git points
# outside the chroot).
rm -rf "$root/repo.git"
git clone -q --bare --single-branch --branch "$(git -C "$repo" rev-parse --abbrev-ref HEAD)" "$repo" "$root/repo.git"

step "README's commands inside the chroot (log: $log)"
set +e
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 /bin/bash -euo pipefail -c '
    t0=$(date +%s)
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq git ca-certificates >/dev/null
    update-ca-certificates >/dev/null
    git config --global --add safe.directory "*"
    cd /root
    rm -rf gpuscope
    git clone -q file:///repo.git gpuscope
    cd gpuscope
    t1=$(date +%s)
    scripts/setup.sh
    t2=$(date +%s)
    ctest --test-dir build --output-on-failure -j2 --timeout 900 -LE image
    t3=$(date +%s)
    echo "fresh-debian: setup.sh $((t2 - t1)) s, ctest $((t3 - t2)) s, prerequisites $((t1 - t0)) s"
  ' >>"$log" 2>&1
status=$?
set -e
end=$(date +%s)

grep -E '^fresh-debian:|tests passed|tests failed|^[0-9]+% tests|The following tests FAILED|Failed|\(Failed\)' "$log" | tail -20 || true
echo "fresh-debian: root filesystem $(( made - start )) s, everything $(( end - start )) s"
echo "fresh-debian: disk used: $(du -sh --one-file-system "$root" | cut -f1) (of which the clone with its build: $(du -sh "$root/root/gpuscope" | cut -f1))"
if [ $status -eq 0 ]; then
  echo "fresh-debian: PASSED"
else
  echo "fresh-debian: FAILED (exit $status); the log is $log"
fi
exit $status

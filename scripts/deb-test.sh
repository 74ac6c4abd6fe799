#!/usr/bin/env bash
# The Debian package, end to end (docs/install.md): builds gpuscope_<version>_<arch>.deb with
# dpkg-buildpackage from the committed HEAD (git archive, so nothing uncommitted slips in), runs
# lintian on it, then in a fresh minimal Debian 12 root (mmdebstrap --variant=minbase bookworm,
# as scripts/fresh-debian.sh makes) installs it with apt (dependencies from Debian), runs
# `gpuscope devices --simulate h100`, profiles a simulated run, analyses it, writes an HTML report
# and a PNG plot, reads `man gpuscope` and `man gpuscope-profile`, completes a word with the bash
# completion; installs libgpuscope0, libgpuscope-dev and python3-gpuscope and measures a window
# of the simulated GPUs from Python; then removes and purges the packages and checks that
# nothing of them is left (dpkg -L before, the files after). Prints the time of each step and the
# package's size.
#
# Usage: scripts/deb-test.sh [--deb FILE]   (--deb: test this package instead of building one)
# Needs: root (mount, chroot), the Debian archive; installs debhelper, dpkg-dev, fakeroot,
# lintian and mmdebstrap when missing. Part of `bash .ci/run full` (about 15 minutes on 2 cores).
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "deb-test: needs root (it mounts /proc and /dev into a chroot)" >&2
  exit 1
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
deb=
others=
if [ "${1:-}" = --deb ]; then deb=$(realpath "$2"); fi

tools=(debhelper dpkg-dev fakeroot lintian mmdebstrap)
missing=()
for package in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

work=$(mktemp -d /var/tmp/gpuscope-deb.XXXXXX)
root=$work/root
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -R -l "${mounts[i]}" 2>/dev/null || true; done
  if [ "${GPUSCOPE_DEB_KEEP:-0}" != 1 ]; then rm -rf --one-file-system "$work"; fi
}
trap cleanup EXIT
step() { echo "deb-test: $(date -u +%H:%M:%S) $*"; }
started=$(date +%s)

# 1. The package, from the committed tree, with uPlot from web/node_modules (the HTML report
#    embeds it; setup.sh fetched it with npm ci).
if [ -z "$deb" ]; then
  version=$(sed -nE 's/^project\(gpuscope VERSION ([0-9.]+).*/\1/p' "$repo/CMakeLists.txt")
  source_dir=$work/gpuscope-$version
  mkdir -p "$source_dir/web/node_modules"
  git -C "$repo" archive HEAD | tar -x -C "$source_dir"
  cp -r "$repo/web/node_modules/uplot" "$source_dir/web/node_modules/"
  step "dpkg-buildpackage -b -us -uc (log: $work/build.log)"
  # nocheck: the project's tests need root services (debian/rules); parallel: debhelper
  # builds with one job unless told
  if ! (cd "$source_dir" && GPUSCOPE_GIT_REVISION=$(git -C "$repo" rev-parse --short HEAD) \
        DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
        nice dpkg-buildpackage -b -us -uc >"$work/build.log" 2>&1); then
    tail -30 "$work/build.log"
    echo "deb-test: FAILED: dpkg-buildpackage" >&2
    exit 1
  fi
  deb=$(ls "$work"/gpuscope_"$version"_*.deb)
  # The C library, its development files and the Python module, built beside it.
  others=$(ls "$work"/libgpuscope0_"$version"_*.deb "$work"/libgpuscope-dev_"$version"_*.deb \
             "$work"/python3-gpuscope_"$version"_all.deb)
  cp "$deb" $others "$repo/../" 2>/dev/null || true
fi
built=$(date +%s)
step "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB, installed $(dpkg-deb -f "$deb" Installed-Size) KiB"
dpkg-deb -f "$deb" Depends Recommends Suggests

# 2. lintian: errors and warnings fail, at the end, after the package was tried (debian/
#    gpuscope.lintian-overrides says why each remaining tag is there).
step "lintian"
lint_status=0
# shellcheck disable=SC2086 (others: a list of paths without spaces)
lintian --fail-on error,warning --info "$deb" $others || lint_status=$?

# 3. A fresh minimal Debian 12, with what a real machine has that a chroot lacks (name
#    resolution, this host's extra CA certificates).
step "mmdebstrap --variant=minbase bookworm"
mmdebstrap --quiet --variant=minbase bookworm "$root" >"$work/mmdebstrap.log" 2>&1
made=$(date +%s)
cp /etc/resolv.conf "$root/etc/resolv.conf"
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  mkdir -p "$root/usr/local/share/ca-certificates"
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
fi
for m in proc dev; do
  case $m in
    proc) mount -t proc proc "$root/proc" ;;
    dev) mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev" ;;
  esac
  mounts+=("$root/$m")
done
# shellcheck disable=SC2086
cp "$deb" $others "$root/root/"
step "install, use, remove and purge inside the root (log: $work/chroot.log)"
set +e
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
  DEB="/root/$(basename "$deb")" \
  OTHERS="$(for f in $others; do printf '/root/%s ' "$(basename "$f")"; done)" /bin/bash -euo pipefail -c "$(cat "$repo/scripts/deb-test-inside.sh")" \
  >"$work/chroot.log" 2>&1
status=$?
set -e
ended=$(date +%s)
grep -E '^deb-test|^gpuscope ' "$work/chroot.log" || true
echo "deb-test: build $((built - started)) s, root $((made - built)) s, inside $((ended - made)) s, all $((ended - started)) s"
if [ $status -ne 0 ]; then
  tail -40 "$work/chroot.log"
  echo "deb-test: FAILED (exit $status)"
  exit $status
fi
if [ $lint_status -ne 0 ]; then
  echo "deb-test: FAILED: lintian (above); the package itself works"
  exit 1
fi
echo "deb-test: PASSED"

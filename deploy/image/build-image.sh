#!/usr/bin/env bash
# Builds gpuscope's container image from this checkout, without a registry (docs/deploy.md):
#   1. the build base: Debian 12 with the compiler and gpuscope's -dev packages (mmdebstrap
#      --variant=minbase), imported with `podman import` as localhost/gpuscope-build:bookworm;
#   2. the run base: Debian 12's run-time libraries of gpuscope only (mmdebstrap
#      --variant=extract), imported as localhost/gpuscope-base:bookworm;
#   3. the source the build reads, as git lists it (tracked and new, not ignored) with uPlot from
#      web/node_modules (scripts/setup.sh's npm ci), then `podman build` of the two-stage
#      deploy/image/Containerfile as localhost/gpuscope:VERSION and :latest.
# The bases are made once and kept (REBUILD_BASES=1 makes them again). Needs root, podman, git
# and mmdebstrap (which reaches the Debian archive). Prints the image's size.
set -euo pipefail
cd "$(dirname "$0")/../.."
image=${IMAGE:-localhost/gpuscope}
work=$(mktemp -d /tmp/gpuscope-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
uplot=web/node_modules/uplot/dist
if [ ! -f "$uplot/uPlot.iife.min.js" ]; then
  echo "build-image: $uplot is missing: run scripts/setup.sh (npm ci) first" >&2
  exit 1
fi
excludes=(--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*')

# What gpuscope's CMake build needs (cmake/Dependencies.cmake), without tests and benchmarks.
build_packages=g++,cmake,ninja-build,pkg-config,ca-certificates,libfmt-dev,libcli11-dev
build_packages+=,nlohmann-json3-dev,libexpected-dev,libsqlite3-dev,zlib1g-dev,libplplot-dev
build_packages+=,libevent-dev,libcpp-httplib-dev,libcurl4-openssl-dev
# serve --web-config: yaml-cpp, and OpenSSL's and libxcrypt's headers (the libraries are loaded at
# run time).
build_packages+=,libyaml-cpp-dev,libssl-dev,libcrypt-dev
# The bases are kept between builds, named after their package lists: a list that changes makes
# a new base.
build_base=localhost/gpuscope-build:bookworm-$(echo "$build_packages" | sha256sum | cut -c1-12)
if [ "${REBUILD_BASES:-0}" = 1 ] || ! podman image exists "$build_base"; then
  mmdebstrap --quiet --variant=minbase --include="$build_packages" "${excludes[@]}" \
    bookworm "$work/build-base.tar"
  podman import --quiet "$work/build-base.tar" "$build_base" >/dev/null
  rm -f "$work/build-base.tar"
fi

# The run-time libraries of the binary (ldd), libcurl for --push and the grid APIs (loaded at
# run time), PLplot's cairo driver and a font for report's PNG/SVG/PDF plots, busybox for a shell.
packages=libc6,libstdc++6,libgcc-s1,zlib1g,libsqlite3-0,libfmt9,libevent-2.1-7,libevent-extra-2.1-7
packages+=,libevent-pthreads-2.1-7,libplplot17,plplot-driver-cairo,fonts-dejavu-core,libcurl4
packages+=,busybox-static
# serve --web-config: its reader's yaml-cpp, TLS (OpenSSL 3 through libevent's OpenSSL
# bufferevents) and bcrypt (libxcrypt), all loaded only when asked.
packages+=,libyaml-cpp0.7,libevent-openssl-2.1-7,libssl3,libcrypt1
base=localhost/gpuscope-base:bookworm-$(echo "$packages" | sha256sum | cut -c1-12)
# Left out of it as well: glibc's iconv modules (gpuscope converts no character sets; UTF-8 and
# ASCII are built into glibc), PLplot's world maps, X11's locale tables, and Perl modules that
# a package's maintainer scripts would use (none run here).
run_excludes=(--dpkgopt='path-exclude=/usr/lib/x86_64-linux-gnu/gconv/*'
  --dpkgopt='path-exclude=/usr/share/plplot5.15.0/ss/*' --dpkgopt='path-exclude=/usr/share/plplot5.15.0/*.shp'
  --dpkgopt='path-exclude=/usr/share/plplot5.15.0/*.shx' --dpkgopt='path-exclude=/usr/share/plplot5.15.0/*.dbf'
  --dpkgopt='path-exclude=/usr/share/X11/locale/*' --dpkgopt='path-exclude=/usr/share/perl5/*'
  --dpkgopt='path-exclude=/usr/share/lintian/*')
if [ "${REBUILD_BASES:-0}" = 1 ] || ! podman image exists "$base"; then
  mmdebstrap --quiet --variant=extract --include="$packages" "${excludes[@]}" "${run_excludes[@]}" \
    bookworm "$work/base.tar"
  podman import --quiet --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' "$work/base.tar" "$base" \
    >/dev/null
  rm -f "$work/base.tar"
fi

# The build context: what the build and install read (not the tests, docs or scripts, so that
# editing those does not make podman compile again), as git knows it and as it is in the working
# tree, and uPlot.
mkdir -p "$work/context/source"
git ls-files -z --cached --others --exclude-standard -- CMakeLists.txt cmake src sim scenarios \
  grafana web/src deploy/image |
  while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
  tar --null -T - -cf - | tar -xf - -C "$work/context/source"
mkdir -p "$work/context/source/$uplot"
cp "$uplot"/uPlot.iife.min.js "$uplot"/uPlot.min.css "$work/context/source/$uplot/"
cp web/node_modules/uplot/LICENSE "$work/context/source/web/node_modules/uplot/" 2>/dev/null || true
revision=$(git rev-parse --short HEAD 2>/dev/null || true)
version=$(sed -n 's/^project(gpuscope VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)

podman build --quiet --runtime runc --network none --ulimit nofile=1024:1024 \
  --ulimit nproc=1024:1024 --build-arg GIT_REVISION="$revision" \
  --build-arg BUILD_BASE="$build_base" --build-arg BASE="$base" \
  -f "$work/context/source/deploy/image/Containerfile" \
  -t "$image:$version" -t "$image:latest" "$work/context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$image:latest")
echo "image: $image:$version ($(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }') MB)"

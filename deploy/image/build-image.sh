#!/usr/bin/env bash
# Builds gpuscope's container image without a registry (issue 16, work in progress):
#   1. the base: Debian 12's run-time libraries of gpuscope, unpacked by mmdebstrap
#      (--variant=extract), imported with `podman import` as localhost/gpuscope-base:bookworm;
#   2. gpuscope installed from BUILD_DIR (default build) into a staging folder;
#   3. `podman build` of deploy/image/Containerfile as localhost/gpuscope:VERSION and :latest.
# Needs root, podman and mmdebstrap (which reaches the Debian archive). Prints the image's size.
set -euo pipefail
cd "$(dirname "$0")/../.."
build_dir=${BUILD_DIR:-build}
image=${IMAGE:-localhost/gpuscope}
base=localhost/gpuscope-base:bookworm
work=$(mktemp -d /tmp/gpuscope-image.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The run-time libraries of build/bin/gpuscope (ldd), libcurl for --push and the grid APIs
# (loaded at run time), CA certificates, busybox for a shell to look around with.
packages=libc6,libstdc++6,libgcc-s1,zlib1g,libsqlite3-0,libfmt9,libevent-2.1-7,libevent-extra-2.1-7
packages+=,libevent-pthreads-2.1-7,libplplot17,libcurl4,busybox-static
if ! podman image exists "$base"; then
  mmdebstrap --quiet --variant=extract --include="$packages" \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' bookworm "$work/base.tar"
  podman import --quiet --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' "$work/base.tar" "$base" \
    >/dev/null
fi

mkdir -p "$work/context"
cmake --install "$build_dir" --prefix "$work/context/install" --strip >/dev/null
cp /etc/ssl/certs/ca-certificates.crt "$work/context/ca-certificates.crt"
version=$("$build_dir/bin/gpuscope" --version | awk '{print $2}')
podman build --quiet --runtime runc --network none --ulimit nofile=1024:1024 \
  --ulimit nproc=1024:1024 -f deploy/image/Containerfile \
  -t "$image:$version" -t "$image:latest" "$work/context" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$image:latest")
echo "image: $image:$version ($((size / 1000000)) MB)"

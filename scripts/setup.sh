#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for gpuscope and builds it:
#   1. installs every build and test dependency from Debian packages (apt-get update first),
#   2. installs the HTML report's web dependencies with npm ci (web/package-lock.json: uPlot,
#      embedded into the binary, and playwright-core for the browser test),
#   3. configures with CMake (warnings as errors) and builds into ./build.
# Safe to run again: packages already installed are not fetched, the build is incremental.
# Options (environment): BUILD_DIR (default build), BUILD_TYPE (default RelWithDebInfo),
# DEBUG_INFO (default on; off builds RelWithDebInfo's -O2 without -g: CI's build, about a third
# quicker to compile and far quicker to link, with the same code), BENCHMARKS (default on; off
# leaves bench/ out of the build: the default CI run's minute, built by `.ci/run full`),
# UNITY (default on: each target's files compiled eight to a translation unit, a clean build in
# about half the time, cmake/UnityBuild.cmake; off for quicker rebuilds of one file while
# working on it). Each applies when the build directory is first configured.
set -euo pipefail

cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-RelWithDebInfo}
DEBUG_INFO=${DEBUG_INFO:-on}
BENCHMARKS=${BENCHMARKS:-on}
UNITY=${UNITY:-on}

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config git clang-format
  # libraries gpuscope links
  libfmt-dev libcli11-dev nlohmann-json3-dev libexpected-dev libsqlite3-dev zlib1g-dev
  # static plots: PLplot with its cairo drivers (PNG, SVG, PDF) and a font for their text
  libplplot-dev plplot-driver-cairo fonts-dejavu-core
  # tests and benchmarks: GoogleTest, Google Benchmark, the sqlite3 shell, a real SLURM cluster
  # with accounting (slurmdbd over a private MariaDB server: the server and client binaries
  # only, not mariadb-server, whose service would start the machine's own database)
  libgtest-dev libgmock-dev libbenchmark-dev sqlite3 slurm-wlm munge slurmdbd
  mariadb-server-core mariadb-client-core
  # the launcher tests run a real Open MPI mpirun
  openmpi-bin
  # the processes test reads serve's /metrics with the curl command
  curl
  # the mail test sends SLURM's mails through msmtp to an SMTP server (aiosmtpd)
  msmtp python3-aiosmtpd
  # the container tests run real podman containers (runc, catatonit for --init) of a busybox
  # image imported from a tarball; as root they need nothing more (no uidmap, slirp4netns or
  # fuse-overlayfs: no subuids, --network none, the kernel's overlayfs)
  podman runc catatonit busybox-static
  # the image test makes the image's Debian 12 base with mmdebstrap (deploy/image)
  mmdebstrap
  # the Kubernetes manifests are validated against the official schemas (tests/kubernetes)
  python3-jsonschema python3-yaml
  # the Python package's tests (tests/python): pytest, read_run's DataFrames, a real CPU
  # training loop (Debian's python3-torch), and `pip install ./python` from the source tree
  python3-pytest python3-pandas python3-torch python3-pip
  # the plot tests decode the PNGs they write
  libpng-dev
  # the HTML report's browser test opens it in a real headless Chromium
  chromium
  # the log readers' tests read local times in named zones (--timezone Europe/Zurich)
  tzdata
  # the generated man pages are rendered with man (groff) and the zsh completion is checked by
  # zsh (tests/packaging)
  man-db zsh
  # exporters: libevent's evhttp serves /metrics, libcurl pushes (loaded at run time);
  # cpp-httplib is the tests' client; the integration tests run a real Prometheus and a real
  # VictoriaMetrics, and a real Alertmanager delivers the shipped alerting rules' alerts
  # (deploy/prometheus); wrk for the scrape benchmark
  libevent-dev libcpp-httplib-dev libcurl4-openssl-dev prometheus prometheus-alertmanager
  victoria-metrics wrk
  # serve --web-config: exporter-toolkit's YAML (yaml-cpp); TLS through OpenSSL and libevent's
  # OpenSSL bufferevents and bcrypt through libxcrypt, all loaded at run time (their headers
  # here); the tests make certificates with the openssl command
  libyaml-cpp-dev libssl-dev libcrypt-dev openssl
  # the fuzz targets (scripts/fuzz.sh): clang with its libFuzzer, ASan and UBSan runtimes
  clang libclang-rt-14-dev
  # the AMD loader's real-library test loads Debian's ROCm SMI (dlopen only: no headers needed)
  librocm-smi64-1
)
# Node and npm fetch the HTML report's assets. A preinstalled node with npm (NodeSource's nodejs
# package bundles npm, and conflicts with Debian's npm) is used as it is; else Debian's are
# installed.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

# Installing packages needs root: run as root (CI, containers, minimal Debian, which has no sudo)
# or as a user who may sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null; then
    sudo "$@"
  else
    echo "setup: installing packages needs root; run scripts/setup.sh as root (there is no sudo here)" >&2
    exit 1
  fi
}

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages already installed"
fi

# Exactly what web/package-lock.json pins; skipped when node_modules already matches the lock.
if [ ! -f web/node_modules/.package-lock.json ] ||
  [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  echo "setup: npm ci in web/"
  (cd web && npm ci --no-audit --no-fund)
else
  echo "setup: web/node_modules already installed"
fi

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
flags=()
case $DEBUG_INFO in
  on) ;;
  off) flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG") ;;
  *) echo "setup: DEBUG_INFO is '$DEBUG_INFO'; say on or off" >&2; exit 2 ;;
esac
case $BENCHMARKS in
  on) flags+=(-DGPUSCOPE_BUILD_BENCHMARKS=ON) ;;
  off) flags+=(-DGPUSCOPE_BUILD_BENCHMARKS=OFF) ;;
  *) echo "setup: BENCHMARKS is '$BENCHMARKS'; say on or off" >&2; exit 2 ;;
esac
case $UNITY in
  on) flags+=(-DCMAKE_UNITY_BUILD=ON) ;;
  off) flags+=(-DCMAKE_UNITY_BUILD=OFF) ;;
  *) echo "setup: UNITY is '$UNITY'; say on or off" >&2; exit 2 ;;
esac
if [ ! -f "$BUILD_DIR/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DGPUSCOPE_WERROR=ON \
    "${flags[@]}"
fi
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "setup: built $BUILD_DIR/bin/gpuscope"

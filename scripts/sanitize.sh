#!/usr/bin/env bash
# Runs the tests under sanitizers, each in its own build folder (docs/reliability.md):
#   scripts/sanitize.sh asan   ASan + UBSan, the whole test suite          (build-asan)
#   scripts/sanitize.sh tsan   TSan over the threaded code: the sampler, the writer, the exporter
#                              and pusher, the launcher, the process watch, and the black-box
#                              profile/monitor/serve tests that run them together (build-tsan)
# Any finding fails the test that hit it (halt_on_error, no UB recovery). Run after
# scripts/setup.sh (it installs the compilers and libraries). A unity build, as setup.sh's
# (cmake/UnityBuild.cmake). Takes 30-40 min each on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/sanitize.sh asan|tsan}
supp=$PWD/tests/sanitizers

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi

case $mode in
  asan)
    dir=build-asan sanitize=address,undefined
    export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
    tests=() # all of them
    ;;
  tsan)
    dir=build-tsan sanitize=thread
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$supp/tsan.supp"
    tests=(-R '^(Analyze|AnalysisLoader|PhaseTracker|TemporaryFolder|RunInputs|Gssr|Sampler|RunWriter|CrashSafety|DiskFull|SampleChunks|Exporter|ExpositionTest|Pusher|PushBuffer|LatestValues|Prometheus|Monitor|ProfileLive|Profile|Job|Driver|LaunchDriver|ForwardedSignals|Terminal|LineSplitter|Faults|Sweep|ProcessWatch|ProcessExposition|processes)')
    ;;
  *)
    echo "sanitize: unknown mode '$mode' (asan or tsan)" >&2
    exit 2
    ;;
esac

if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUSCOPE_SANITIZE="$sanitize" -DGPUSCOPE_BUILD_BENCHMARKS=OFF -DGPUSCOPE_WERROR=ON \
    -DCMAKE_UNITY_BUILD=ON
fi
cmake --build "$dir" -j"$(nproc)"
# The format check says nothing about the build; the browser tests' Chromium is not ours.
ctest --test-dir "$dir" --output-on-failure -j2 -E '^format$' "${tests[@]}"

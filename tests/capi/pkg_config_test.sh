#!/usr/bin/env bash
# The C library as a user gets it: `cmake --install` into a fresh prefix, then a C program built
# with nothing but `pkg-config --cflags --libs gpuscope` and run on the simulated GPUs.
# Usage: pkg_config_test.sh BUILD_DIR SOURCE_DIR SIM_NVML_LIBRARY
set -euo pipefail
build=$1 source=$2 sim=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
pc=$(find "$work/prefix" -name gpuscope.pc)
[ -n "$pc" ] || { echo "pkg_config_test: no gpuscope.pc installed" >&2; exit 1; }
test -f "$work/prefix/include/gpuscope.h"
export PKG_CONFIG_PATH=$(dirname "$pc")
flags() { pkg-config --define-variable=prefix="$work/prefix" "$@" gpuscope; }
echo "pkg-config: $(flags --cflags --libs)"
cc -std=c99 -Wall -Wextra -Werror $(flags --cflags) "$source/tests/capi/c_program.c" \
  -o "$work/program" $(flags --libs) -lm
libdir=$(flags --variable=libdir)
ls "$libdir"/libgpuscope.so.0 >/dev/null
LD_LIBRARY_PATH=$libdir GPUSCOPE_NVML_LIBRARY=$sim \
  GPUSCOPE_SIM_SCENARIO=$source/scenarios/h100.json "$work/program"
# The program found the installed library, not the build tree's (ldd's output kept first: grep -q
# closing the pipe early would fail ldd with SIGPIPE under pipefail).
linked=$(LD_LIBRARY_PATH=$libdir ldd "$work/program")
[[ $linked == *"$libdir/libgpuscope.so.0"* ]]
echo "pkg_config_test: built with pkg-config and ran against $libdir"

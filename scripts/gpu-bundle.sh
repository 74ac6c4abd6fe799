#!/usr/bin/env bash
# Packs a build for a machine that has a GPU but none of the build's libraries (the lent GPU
# machine reaches no package registry): stripped gpuscope and benchmarks in bin/, private
# libraries in lib/gpuscope/, every shared library they need except glibc's in lib/, with an rpath
# of $ORIGIN/../lib. Usage: scripts/gpu-bundle.sh BUILD_DIR OUT_DIR
set -euo pipefail
build=${1:-build}
out=${2:-.gpubundle}
command -v patchelf >/dev/null || { echo "gpu-bundle: needs patchelf (apt-get install patchelf)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/gpuscope" "$out/share"
cp "$build/bin/gpuscope" "$out/bin/"
for b in bench_nvml_calls bench_sampler; do
  [ -x "$build/bench/$b" ] && cp "$build/bench/$b" "$out/bin/"
done
cp "$build"/lib/gpuscope/*.so "$out/lib/gpuscope/"
[ -d "$build/share/gpuscope" ] && cp -r "$build/share/gpuscope" "$out/share/"
# glibc's own libraries and the CUDA ones come from the GPU machine.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libutil\.so|libcupti|libcuda|libnvidia)'
for f in "$out"/bin/* "$out"/lib/gpuscope/*.so; do
  ldd "$f" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    [ -e "$out/lib/$name" ] || cp -L "$path" "$out/lib/$name"
  done
done
# What serve --web-config loads with dlopen (found through the binary's rpath).
for name in libevent_openssl-2.1.so.7 libssl.so.3 libcrypto.so.3 libcrypt.so.1; do
  path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
  [ -n "$path" ] && [ ! -e "$out/lib/$name" ] && cp -L "$path" "$out/lib/$name"
done
for f in "$out"/bin/* "$out"/lib/gpuscope/*.so "$out"/lib/*.so*; do
  strip --strip-debug "$f" 2>/dev/null || true
done
for f in "$out"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
for f in "$out"/lib/gpuscope/*.so; do patchelf --set-rpath '$ORIGIN/..' "$f"; done
for f in "$out"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$f"; done
du -sh "$out"

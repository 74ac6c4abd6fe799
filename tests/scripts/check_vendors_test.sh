#!/usr/bin/env bash
# scripts/check-vendors.sh on small trees: a vendor's namespace, word or enumerator compared in
# code above collect/ fails it, the same in a comment or inside collect/ does not, dcgm:: passes
# in ingest/ only (DCGM's field ids as a data format), and a listed file that no longer names a
# vendor is said (a failure under GPUSCOPE_VENDORS_STRICT=1).
set -euo pipefail
check="$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-vendors.sh"
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
fail() { echo "check_vendors_test: $*" >&2; exit 1; }
mkdir -p "$tree/src/app" "$tree/src/collect" "$tree/src/report"
printf 'int f(const nvml::Session* s);\n' >"$tree/src/collect/gpu.hpp"
printf '// nvml::Session is read in collect/, vendor == "amd" too\nint g();\n' >"$tree/src/app/ok.cpp"
GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null || fail "a clean tree failed"
printf 'bool amd(const Gpu& g) { return g.vendor == "amd"; }\n' >"$tree/src/report/bad.cpp"
if out=$(GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" 2>&1); then fail "a vendor word passed"; fi
grep -q 'src/report/bad.cpp:1: names a vendor' <<<"$out" || fail "no file:line in: $out"
GPUSCOPE_VENDORS_KNOWN="src/report/bad.cpp" "$check" "$tree" >/dev/null || fail "a listed file failed"
rm "$tree/src/report/bad.cpp"
printf 'void h(amd::Session& s);\n' >"$tree/src/app/bad.hpp"
if GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null 2>&1; then fail "amd:: passed"; fi
rm "$tree/src/app/bad.hpp"
printf 'int i = dcgm::kDevGpuUtil;\n' >"$tree/src/app/bad.cpp"
if GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null 2>&1; then fail "dcgm:: passed in app/"; fi
mkdir -p "$tree/src/ingest" && mv "$tree/src/app/bad.cpp" "$tree/src/ingest/dmon.cpp"
GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null || fail "dcgm:: failed in ingest/"
printf 'void s(amd::Session& s);\n' >"$tree/src/ingest/bad.cpp"
if GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null 2>&1; then fail "amd:: passed in ingest/"; fi
rm "$tree/src/ingest/bad.cpp"
for code in 'if (d.vendor == Vendor::Amd) f();' 'switch (v) { case Vendor::Amd: f(); }' \
  'bool n = gpuscope::Vendor::Nvidia != v;'; do
  printf '%s\n' "$code" >"$tree/src/report/bad.cpp"
  if GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null 2>&1; then fail "passed: $code"; fi
done
mkdir -p "$tree/src/core" && mv "$tree/src/report/bad.cpp" "$tree/src/core/vendor.hpp"
GPUSCOPE_VENDORS_KNOWN="" "$check" "$tree" >/dev/null || fail "the enum's own file failed"
if out=$(GPUSCOPE_VENDORS_STRICT=1 GPUSCOPE_VENDORS_KNOWN="src/app/ok.cpp" "$check" "$tree" 2>&1); then
  fail "a listed file naming no vendor passed"
fi
grep -q 'remove it from the list' <<<"$out" || fail "no advice in: $out"
out=$(GPUSCOPE_VENDORS_KNOWN="src/app/ok.cpp" "$check" "$tree" 2>&1) || fail "a stale entry failed: $out"
grep -q 'remove it from the list' <<<"$out" || fail "a stale entry was not said: $out"
echo "check_vendors_test: passed"

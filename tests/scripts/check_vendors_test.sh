#!/usr/bin/env bash
# scripts/check-vendors.sh on small trees: a vendor's namespace or word in code above collect/
# fails it, the same in a comment or inside collect/ does not, and a listed file that no longer
# names a vendor fails it (the list only shrinks).
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
if out=$(GPUSCOPE_VENDORS_STRICT=1 GPUSCOPE_VENDORS_KNOWN="src/app/ok.cpp" "$check" "$tree" 2>&1); then
  fail "a listed file naming no vendor passed"
fi
grep -q 'remove it from the list' <<<"$out" || fail "no advice in: $out"
out=$(GPUSCOPE_VENDORS_KNOWN="src/app/ok.cpp" "$check" "$tree" 2>&1) || fail "a stale entry failed: $out"
grep -q 'remove it from the list' <<<"$out" || fail "a stale entry was not said: $out"
echo "check_vendors_test: passed"

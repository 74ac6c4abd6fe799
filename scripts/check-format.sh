#!/usr/bin/env bash
# Fails when a C++ file differs from what .clang-format makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.hpp.in' 2>/dev/null | grep -v '\.in$' || true)
if [ ${#files[@]} -eq 0 ]; then
  mapfile -t files < <(find src sim tests bench -name '*.cpp' -o -name '*.hpp')
fi
clang-format --dry-run --Werror "${files[@]}"
echo "format: ${#files[@]} files clean"

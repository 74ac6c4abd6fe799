#!/usr/bin/env bash
# Fails when a source file or header includes a gpuscope folder its layer may not use
# (ARCHITECTURE.md, "Layers and the dependency rule"). The libraries' link dependencies catch a
# wrong call at link time; this catches a wrong include, headers and inline code included, at
# test time. Each line: a folder and the folders its files may include.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [src/util]="util"
  [src/core]="core util"
  [src/nvml]="nvml core util"
  [src/dcgm]="dcgm core util"
  [src/amd]="amd core util"
  [src/collect]="collect nvml dcgm amd core util"
  [src/launch]="launch core util"
  [src/ranks]="ranks core util"
  [src/processes]="processes ranks core util"
  [src/node]="node core util"
  [src/phases]="phases core util"
  [src/carbon]="carbon core util"
  [src/store]="store core util"
  [src/analyze]="analyze core util"
  [src/report]="report analyze core util"
  [src/export]="export collect nvml core util"
  [src/sweep]="sweep core util"
  [src/kernels]="kernels store core util"
  [src/trace]="trace kernels store core util"
  [src/tsdb]="tsdb core util"
  [src/ingest]="ingest store kernels dcgm tsdb core util"
  [src/load]="load ingest analyze carbon store core util"
  [src/docgen]="docgen"
  [src/app]="app docgen collect launch ranks processes phases carbon store tsdb ingest load analyze report export sweep kernels trace nvml node core util"
  [src/cli]="cli app docgen collect launch ranks processes phases carbon store tsdb ingest load analyze report export sweep kernels trace nvml node core util"
  [sim]="sim nvml dcgm amd util"
)

bad=0
checked=0
for folder in "${!allowed[@]}"; do
  [ -d "$folder" ] || continue
  while IFS= read -r -d '' file; do
    checked=$((checked + 1))
    while IFS= read -r line; do
      target=${line#*\"}
      target=${target%%/*}
      case " ${allowed[$folder]} " in
        *" $target "*) ;;
        *)
          echo "$file: includes \"$target/...\", which $folder/ may not use (ARCHITECTURE.md)" >&2
          bad=$((bad + 1))
          ;;
      esac
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[a-z_]+/' "$file" || true)
  done < <(find "$folder" -name '*.cpp' -o -name '*.hpp' -o -name '*.hpp.in' | tr '\n' '\0')
done
# SQLite's own header stays inside store/: no file elsewhere includes it, store/sqlite.hpp (which
# includes it) or a store header that reaches either (foreign SQLite files are read through
# store/foreign_sqlite.hpp).
reaches_sqlite() {  # a store header, and the store headers it includes, recursively
  local header=$1 seen=$2 next
  grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<sqlite3\.h>' "$header" && return 0
  while IFS= read -r next; do
    [ "$next" = store/sqlite.hpp ] && return 0
    case " $seen " in *" $next "*) continue ;; esac
    [ -f "src/$next" ] && reaches_sqlite "src/$next" "$seen $next" && return 0
  done < <(grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"store/[a-z_]+\.hpp"' "$header" |
    sed -E 's/.*"(.*)"/\1/')
  return 1
}
while IFS= read -r -d '' file; do
  case $file in src/store/*) continue ;; esac
  if grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]+<sqlite3\.h>' "$file"; then
    echo "$file: includes <sqlite3.h>; only src/store/ may (ARCHITECTURE.md)" >&2
    bad=$((bad + 1))
  fi
  while IFS= read -r header; do
    if reaches_sqlite "src/$header" "$header"; then
      echo "$file: includes $header, which brings sqlite3.h out of src/store/ (ARCHITECTURE.md)" >&2
      bad=$((bad + 1))
    fi
  done < <(grep -oE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"store/[a-z_]+\.hpp"' "$file" |
    sed -E 's/.*"(.*)"/\1/')
done < <(find src sim -name '*.cpp' -o -name '*.hpp' | tr '\n' '\0')
# Folders of src/ that the table does not know would escape the check.
for dir in src/*/; do
  dir=${dir%/}
  if [ -z "${allowed[$dir]+x}" ]; then
    echo "$dir: not in scripts/check-includes.sh's table; add its layer" >&2
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "includes: $bad wrong include(s)" >&2
  exit 1
fi
echo "includes: $checked files follow the layers"

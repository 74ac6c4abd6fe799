#!/usr/bin/env bash
# Fails when code outside src/collect/, the vendor folders (src/nvml, src/dcgm, src/amd) and sim/
# names a vendor's library (`nvml::`, `amd::`, `dcgm::`) or tests a vendor by its word or enum
# (`vendor == "amd"`, `== "nvidia"`, `== Vendor::Amd`, `case Vendor::Amd`): above collect/, GPUs
# are seen through its one interface (collect/gpu_vendor.hpp, collect/node_gpus.hpp), and what a
# metric means on each vendor is said by the metric catalog (ARCHITECTURE.md, "The GPU
# interface"). Comments are not code: they may name a vendor. Two reaches are allowed by rule:
# src/ingest/ may name `dcgm::`, since DCGM's field ids are a data format there (`dcgmi dmon`
# logs, DCGM exporter series, read from dcgm/fields.hpp without any DCGM session), and
# core/vendor.* says each enumerator's word.
#
# Files that still break the rule are listed in KNOWN with the work that removes them; a listed
# file that no longer breaks it is said (a failure with GPUSCOPE_VENDORS_STRICT=1).
# Usage: check-vendors.sh [ROOT]   (GPUSCOPE_VENDORS_KNOWN, when set, replaces the list: the
# checker's own test runs it on small trees)
set -euo pipefail
root=${1:-"$(dirname "$0")/.."}
cd "$root"

KNOWN=()

if [ -n "${GPUSCOPE_VENDORS_KNOWN+set}" ]; then read -r -a KNOWN <<<"$GPUSCOPE_VENDORS_KNOWN"; fi

# A vendor's word or core/vendor.hpp's enumerator compared.
words='vendor(\(\))?\)? *[!=]= *"|[!=]= *"(amd|nvidia)"|"(amd|nvidia)" *[!=]='
words+='|[!=]= *(gpuscope::)?Vendor::|Vendor::[A-Za-z_]+ *[!=]=|case +(gpuscope::)?Vendor::'
pattern='\b(nvml|amd|dcgm)::|'"$words"
bad=0
declare -A offends=() reported=()
# One pass over the tree (a process per file took 20 s): each hit as FILE<TAB>LINE<TAB>TEXT. Code
# only: // comments and the lines of /* */ blocks blanked.
hits=$(python3 - "$pattern" "$words" <<'PYTHON'
import re
import sys
from pathlib import Path

everywhere = re.compile(sys.argv[1])
ingest = re.compile(r'\b(nvml|amd)::|' + sys.argv[2])  # DCGM's field ids are a format there
skipped = ('src/collect/', 'src/nvml/', 'src/dcgm/', 'src/amd/', 'src/core/vendor.')
for path in sorted(Path('src').rglob('*')):
    name = str(path)
    if path.suffix not in ('.cpp', '.hpp') or not path.is_file() or name.startswith(skipped):
        continue
    vendors = ingest if name.startswith('src/ingest/') else everywhere
    block = False
    for number, line in enumerate(path.read_text(errors='replace').split('\n'), 1):
        code = line.split('//', 1)[0]
        if '/*' in code:
            block = True
        text = '' if block else code
        if '*/' in code:
            block = False
        if vendors.search(text):
            print(f'{name}\t{number}\t{text}')
PYTHON
)
while IFS=$'\t' read -r file number text; do
  [ -n "$file" ] || continue
  offends[$file]=1
  known=0
  for k in "${KNOWN[@]+"${KNOWN[@]}"}"; do [ "$k" = "$file" ] && known=1; done
  if [ $known = 0 ]; then
    echo "$file:$number: names a vendor ($text); see GPUs through collect/'s interface" >&2
    [ -n "${reported[$file]:-}" ] || bad=$((bad + 1))
    reported[$file]=1
  fi
done <<<"$hits"
# A listed file that no longer names a vendor is said, so the list is shortened; it fails the
# check only under GPUSCOPE_VENDORS_STRICT=1 (the checker's test), so that work moving files onto
# collect/ never breaks the build between its commits.
for k in "${KNOWN[@]+"${KNOWN[@]}"}"; do
  if [ -z "${offends[$k]:-}" ]; then
    echo "$k: listed in KNOWN but names no vendor now; remove it from the list" >&2
    if [ "${GPUSCOPE_VENDORS_STRICT:-0}" = 1 ]; then bad=$((bad + 1)); fi
  fi
done
if [ $bad -gt 0 ]; then
  echo "vendors: $bad file(s) break the vendor rule (ARCHITECTURE.md)" >&2
  exit 1
fi
if [ ${#KNOWN[@]} -eq 0 ]; then
  echo "vendors: no vendor named outside collect/, the vendor folders and sim/"
else
  echo "vendors: no vendor named outside collect/, the vendor folders and sim/ but in the ${#KNOWN[@]} files listed"
fi

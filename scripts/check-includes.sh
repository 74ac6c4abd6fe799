#!/usr/bin/env bash
# Fails when a source file or header includes a gpuscope folder its layer may not use
# (ARCHITECTURE.md, "Layers and the dependency rule"). The libraries' link dependencies catch a
# wrong call at link time; this catches a wrong include, headers and inline code included, at
# test time. Each line: a folder and the folders its files may include.
#
# It also fails a file that declares a class, struct, union or enum (a forward declaration or
# more) in the namespace of a folder its layer may not use: `namespace gpuscope::amd { class
# Session; }` in src/app/ reaches amd/ without an include. Usage: check-includes.sh [ROOT]
# (ROOT defaults to this checkout; tests/scripts/check_includes_test.sh runs it on small trees).
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

declare -A allowed=(
  [src/util]="util"
  [src/core]="core util"
  [src/nvml]="nvml core util"
  [src/dcgm]="dcgm core util"
  [src/amd]="amd core util"
  [src/collect]="collect nvml dcgm amd processes core util"
  [src/launch]="launch core util"
  [src/ranks]="ranks core util"
  [src/processes]="processes ranks core util"
  [src/node]="node core util"
  [src/phases]="phases core util"
  [src/carbon]="carbon core util"
  [src/store]="store core util"
  [src/analyze]="analyze core util"
  [src/report]="report analyze core util"
  [src/exporter]="exporter collect core util"
  [src/sweep]="sweep core util"
  [src/kernels]="kernels store core util"
  [src/trace]="trace kernels store core util"
  [src/tsdb]="tsdb core util"
  [src/ingest]="ingest store kernels dcgm tsdb core util"
  [src/load]="load ingest analyze carbon store core util"
  [src/fleet]="fleet ingest tsdb analyze store core util"
  [src/guard]="guard fleet ingest tsdb analyze store core util"
  [src/docgen]="docgen"
  [src/capi]="capi collect ranks phases core util"
  [src/app]="app docgen collect launch ranks processes phases carbon store tsdb ingest load fleet guard analyze report exporter sweep kernels trace node core util"
  [src/cli]="cli app docgen collect launch ranks processes phases carbon store tsdb ingest load fleet guard analyze report exporter sweep kernels trace node core util"
  [sim]="sim nvml dcgm amd util"
)

# Whose namespace is whose: gpuscope::<folder> is src/<folder>'s (nested namespaces too, as
# gpuscope::report::plots is report/'s), and these differ.
declare -A namespace_folder=(
  [gpuscope]=src/core
  [gpuscope::http]=src/core
  [gpuscope::sim]=sim
)
# Declarations in another layer's namespace that are known and meant: "file-glob namespace".
declared_elsewhere=(
  # core's plain sweep data, shared by sweep/, store/ and report/, is named in sweep's namespace.
  "src/core/sweep.hpp gpuscope::sweep"
)

bad=0
checked=0
table=()
for folder in "${!allowed[@]}"; do table+=("$folder=${allowed[$folder]}"); done
# Includes, in one pass over the tree (a process per file took most of a minute): a folder's
# files include only the folders of its line above, and SQLite's own header stays inside
# src/store/: no file elsewhere includes it, store/sqlite.hpp (which includes it) or a store
# header that reaches either (foreign SQLite files are read through store/foreign_sqlite.hpp).
# The last line printed is the number of files checked.
while IFS= read -r line; do
  case $line in
    checked=*) checked=${line#checked=} ;;
    *)
      echo "$line" >&2
      bad=$((bad + 1))
      ;;
  esac
done < <(python3 - "${table[@]}" <<'PYTHON'
import re
import sys
from pathlib import Path

allowed = {}
for entry in sys.argv[1:]:
    folder, _, value = entry.partition('=')
    allowed[folder] = set(value.split())
LAYERED = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([a-z_]+)/', re.M)
SQLITE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+<sqlite3\.h>', re.M)
STORE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"(store/[a-z_]+\.hpp)"', re.M)

checked = 0
for folder in sorted(allowed):
    if not Path(folder).is_dir():
        continue
    for path in sorted(Path(folder).rglob('*')):
        if not path.is_file() or not path.name.endswith(('.cpp', '.hpp', '.hpp.in')):
            continue
        checked += 1
        for target in LAYERED.findall(path.read_text(errors='replace')):
            if target not in allowed[folder]:
                print(f'{path}: includes "{target}/...", which {folder}/ may not use '
                      f'(ARCHITECTURE.md)')

reaches = {}
def reaches_sqlite(header, seen):
    """Whether the store header `header` (store/x.hpp) includes sqlite3.h, store/sqlite.hpp or a
    store header that does, recursively."""
    if header in reaches:
        return reaches[header]
    path = Path('src') / header
    text = path.read_text(errors='replace') if path.is_file() else ''
    found = bool(SQLITE.search(text))
    for nested in STORE.findall(text):
        if found:
            break
        found = nested == 'store/sqlite.hpp' or (
            nested not in seen and reaches_sqlite(nested, seen | {nested}))
    reaches[header] = found
    return found

for top in ('src', 'sim'):
    for path in sorted(Path(top).rglob('*')):
        if not path.is_file() or path.suffix not in ('.cpp', '.hpp'):
            continue
        if str(path).startswith('src/store/'):
            continue
        text = path.read_text(errors='replace')
        if SQLITE.search(text):
            print(f'{path}: includes <sqlite3.h>; only src/store/ may (ARCHITECTURE.md)')
        for header in STORE.findall(text):
            if header == 'store/sqlite.hpp' or reaches_sqlite(header, {header}):
                print(f'{path}: includes {header}, which brings sqlite3.h out of src/store/ '
                      f'(ARCHITECTURE.md)')
print(f'checked={checked}')
PYTHON
)
# Types declared in another layer's namespace: a forward declaration reaches that layer as surely
# as an include does.
for name in "${!namespace_folder[@]}"; do table+=("namespace:$name=${namespace_folder[$name]}"); done
for known in "${declared_elsewhere[@]}"; do table+=("known:$known"); done
while IFS= read -r problem; do
  echo "$problem" >&2
  bad=$((bad + 1))
done < <(python3 - "${table[@]}" <<'PYTHON'
import fnmatch
import re
import sys
from pathlib import Path

allowed, owners, known = {}, {}, []
for entry in sys.argv[1:]:
    key, _, value = entry.partition('=')
    if key.startswith('namespace:'):
        owners[key[len('namespace:'):]] = value
    elif key.startswith('known:'):
        known.append(entry[len('known:'):].split())
    else:
        allowed[key] = set(value.split())
for folder in allowed:
    owners.setdefault('gpuscope::' + folder.split('/')[-1], folder)

def owner(namespace):
    """The folder whose namespace `namespace` is (its longest known prefix), or None."""
    parts = namespace.split('::')
    for n in range(len(parts), 0, -1):
        if '::'.join(parts[:n]) in owners:
            return owners['::'.join(parts[:n])]
    return None

# Comments, strings and character literals blanked, newlines kept.
TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'|^[ \t]*#[^\n]*", re.S | re.M)
EVENT = re.compile(r'\b(?:inline\s+)?namespace\s+([\w:]*)\s*\{|[{};]|'
                   r'\b(?:class|struct|union|enum(?:\s+(?:class|struct))?)\s+'
                   r'(?:\[\[[^\]]*\]\]\s*)?(\w+)\s*(?:final\s*)?(?=[;{:])(?!::)')

def declarations(text):
    """(line, kind name, namespace) of each type declared at namespace scope in `text`."""
    code = TOKEN.sub(lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text)
    stack = [('namespace', '')]  # per open brace: ('namespace', its full name) or ('other', '')
    friend = False
    for match in EVENT.finditer(code):
        token = match.group(0)
        if match.group(1) is not None or token.startswith(('namespace', 'inline')):
            outer = stack[-1][1] if stack[-1][0] == 'namespace' else None
            if outer is None:
                stack.append(('other', ''))
            else:
                inner = match.group(1) or ''
                stack.append(('namespace', '::'.join(p for p in (outer, inner) if p)))
        elif token == '{':
            stack.append(('other', ''))
        elif token == '}':
            if len(stack) > 1:
                stack.pop()
        elif token == ';':
            pass
        elif stack[-1][0] == 'namespace':
            before = code[max(0, match.start() - 20):match.start()]
            if re.search(r'\bfriend\s*$', before):
                continue
            line = code.count('\n', 0, match.start()) + 1
            kind = ' '.join(token[:match.start(2) - match.start()].split()[:2])
            yield line, f'{kind} {match.group(2)}', stack[-1][1]

for folder in sorted(allowed):
    if not Path(folder).is_dir():
        continue
    for path in sorted(Path(folder).rglob('*')):
        if path.suffix not in ('.cpp', '.hpp') and not path.name.endswith('.hpp.in'):
            continue
        for line, what, namespace in declarations(path.read_text(errors='replace')):
            home = owner(namespace)
            if home is None or home == folder or home.split('/')[-1] in allowed[folder]:
                continue
            if any(fnmatch.fnmatch(str(path), glob) and namespace == name for glob, name in known):
                continue
            print(f'{path}:{line}: declares {what} in {namespace}, which belongs to {home}/; '
                  f'{folder}/ may not use it (ARCHITECTURE.md)')
PYTHON
)
# Folders of src/ that the table does not know would escape the check.
for dir in src/*/; do
  dir=${dir%/}
  if [ -z "${allowed[$dir]+x}" ]; then
    echo "$dir: not in scripts/check-includes.sh's table; add its layer" >&2
    bad=$((bad + 1))
  fi
done
if [ "$bad" -gt 0 ]; then
  echo "includes: $bad wrong include(s) or declaration(s)" >&2
  exit 1
fi
echo "includes: $checked files follow the layers"

#!/usr/bin/env python3
"""The dependency rule at link level (ARCHITECTURE.md): fails when a module's code calls into a
gpuscope module it does not declare itself, or declares one its folder may not use.

Reads the module table CMake writes (build/generated/modules.tsv: each module, its folder, its
static archive and the gpuscope modules its DEPENDS names) and the layer table of
scripts/check-includes.sh. For every symbol a module's objects leave undefined, the module that
defines it (a strong definition: code or data, not an inline function or template instance
every includer may carry) must be the module itself or one it declares. Modules link PRIVATE,
so nothing is reached through another module's declarations. Then every declared module must lie
in a folder the declaring folder's row allows.

Usage: check-links.py BUILD_DIR"""
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STRONG = set('TDBRG')  # text, initialised data, BSS, read-only, small data
# Declarations the layer table does not allow yet, each with the work that removes it; one that
# is no longer declared is said, so the list is shortened.
KNOWN = {}


def layer_table():
    """folder -> the top-level folders it may include, from check-includes.sh."""
    script = Path(os.environ.get('GPUSCOPE_LAYER_TABLE', ROOT / 'scripts' / 'check-includes.sh'))
    text = script.read_text()
    rows = re.findall(r'^\s*\[(src/[a-z_/]+|sim)\]="([^"]*)"', text, re.M)
    if not rows:
        sys.exit('check-links: no layer table found in scripts/check-includes.sh')
    return {folder: set(allowed.split()) for folder, allowed in rows}


def read_modules(build):
    table = build / 'generated' / 'modules.tsv'
    if not table.is_file():
        sys.exit(f'check-links: {table} is missing; configure the build first')
    modules = {}
    for line in table.read_text().splitlines():
        if not line.strip():
            continue
        name, folder, archive, declared = (line.split('\t') + [''])[:4]
        modules[name] = {'folder': folder, 'archive': Path(archive), 'declared': set(declared.split())}
    return modules


def symbols(archive):
    """(strong definitions, undefined references) of a static archive."""
    if not archive.is_file():
        sys.exit(f'check-links: {archive} is missing; build the libraries first')
    out = subprocess.run(['nm', '--format=posix', '--no-sort', str(archive)],
                         capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.endswith(':'):
            continue
        name, kind = parts[0], parts[1]
        if kind == 'U':
            undefined.add(name)
        elif kind in STRONG:
            defined.add(name)
    return defined, undefined - defined


def demangle(names):
    out = subprocess.run(['c++filt'], input='\n'.join(names), capture_output=True, text=True)
    return out.stdout.splitlines() if out.returncode == 0 else list(names)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    modules = read_modules(Path(sys.argv[1]))
    layers = layer_table()
    owner = {}
    uses = {}
    for name, module in modules.items():
        defined, undefined = symbols(module['archive'])
        for symbol in defined:
            owner.setdefault(symbol, name)
        uses[name] = undefined
    bad = 0
    for name, module in sorted(modules.items()):
        reached = {}
        for symbol in uses[name]:
            home = owner.get(symbol)
            if home and home != name and home not in module['declared']:
                reached.setdefault(home, []).append(symbol)
        for home, found in sorted(reached.items()):
            example = [name.split('(')[0] + '()' for name in demangle(sorted(found)[:3])]
            print(f"{module['folder']}: {name} calls into {home} ({len(found)} symbols, e.g. "
                  f"{'; '.join(example)}) without declaring it in DEPENDS", file=sys.stderr)
            bad += 1
        folder = module['folder']
        row_key = folder if folder in layers else '/'.join(folder.split('/')[:2])
        allowed = layers.get(row_key)
        for dep in sorted(module['declared']):
            dep_folder = modules[dep]['folder'].split('/')[1] if dep in modules else None
            if (name, dep) in KNOWN:
                continue
            if allowed is not None and dep_folder and dep_folder not in allowed:
                print(f'{folder}: {name} declares {dep} ({dep_folder}/), which its row of the '
                      f'layer table does not allow (scripts/check-includes.sh)', file=sys.stderr)
                bad += 1
    for (name, dep), reason in sorted(KNOWN.items()):
        if name in modules and dep not in modules[name]['declared']:
            print(f'{name} no longer declares {dep}: remove it from KNOWN in '
                  f'scripts/check-links.py ({reason})', file=sys.stderr)
    if bad:
        print(f'links: {bad} problem(s); declare what a module uses in its CMakeLists DEPENDS, '
              f'within its layer', file=sys.stderr)
        return 1
    print(f'links: {len(modules)} modules call only what they declare, within their layers')
    return 0


if __name__ == '__main__':
    sys.exit(main())

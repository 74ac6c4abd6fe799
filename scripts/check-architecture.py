#!/usr/bin/env python3
"""Fails when the map drifts from the house: ARCHITECTURE.md's tables against the tree, the
include table of scripts/check-includes.sh and the libraries CMake declares; its list of checks
against the tests that run them; docs/README.md against the pages of docs/; docs/database.md's
schema version against the code.

Usage: check-architecture.py [BUILD_DIR]   (with a build, also the libraries' names)"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
problems = []


def problem(text):
    problems.append(text)


def include_rows():
    text = (ROOT / 'scripts' / 'check-includes.sh').read_text()
    rows = re.findall(r'^\s*\[(src/[a-z_]+|sim)\]="([^"]*)"', text, re.M)
    return {f'{folder}/': set(allowed.split()) - {folder.split('/')[-1]} for folder, allowed in rows}


def table_rows(text, header):
    """The rows of the markdown table whose header row starts with `header`."""
    start = text.find(header)
    if start < 0:
        problem(f'ARCHITECTURE.md: no table starting "{header}"')
        return []
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith('|'):
            break
        rows.append([cell.strip() for cell in line.strip().strip('|').split('|')])
    return rows


def may_use(cell, listed_before, rows):
    """The folders a "May use" cell names, its two phrases resolved."""
    named = {word.strip('/') for word in re.findall(r'`([a-z_/]+)`', cell)}
    if cell == 'nothing of gpuscope':
        return set()
    if cell.startswith('every folder above but'):
        excepted = {w.strip('/') for w in re.findall(r'`([a-z_/]+)`', re.sub(r'\([^)]*\)', '', cell))}
        return {f.split('/')[-2] for f in listed_before} - excepted
    match = re.fullmatch(r'`([a-z_]+)` and what `\1` may use', cell)
    if match:
        return {match.group(1)} | rows.get(f'src/{match.group(1)}/', set())
    return named


def check_folders(text):
    rows = table_rows(text, '| Folder | What it holds | May use |')
    folders = [re.sub(r'`', '', row[0]) for row in rows]
    tree = {f'src/{p.name}/' for p in (ROOT / 'src').iterdir() if (p / 'CMakeLists.txt').is_file()}
    tree.add('sim/')
    for missing in sorted(tree - set(folders)):
        problem(f'ARCHITECTURE.md: folder {missing} is in the tree but not in the table')
    for folder in sorted(tree):
        lists = ROOT / folder / 'CMakeLists.txt'
        if not lists.read_text().startswith('#'):
            problem(f'{folder}CMakeLists.txt: opens with no paragraph on its files '
                    '(ARCHITECTURE.md says each does)')
    for extra in sorted(set(folders) - tree):
        problem(f'ARCHITECTURE.md: folder {extra} is in the table but not in the tree')
    includes = include_rows()
    documented = {}
    for i, (folder, row) in enumerate(zip(folders, rows)):
        documented[folder] = may_use(row[2], folders[:i], documented)
        expected = includes.get(folder.rstrip('/').replace('sim/', 'sim') + '/', None)
        if expected is None:
            expected = includes.get(folder)
        if expected is None:
            problem(f'ARCHITECTURE.md: {folder} has no row in scripts/check-includes.sh')
        elif documented[folder] != expected:
            problem(f'ARCHITECTURE.md: {folder} may use {sorted(documented[folder])} on the page '
                    f'but {sorted(expected)} in scripts/check-includes.sh')
    return folders


def check_rooms(text):
    rows = table_rows(text, '| Room | What it holds |')
    rooms = {re.sub(r'`', '', row[0]) for row in rows}
    tree = set()
    for parent in ('app', 'ingest'):
        for p in (ROOT / 'src' / parent).iterdir():
            if p.is_dir():
                tree.add(f'src/{parent}/{p.name}/')
    for missing in sorted(tree - rooms):
        problem(f'ARCHITECTURE.md: room {missing} is in the tree but not in the rooms table')
    for extra in sorted(rooms - tree):
        problem(f'ARCHITECTURE.md: room {extra} is in the rooms table but not in the tree')
    loose = sorted(p.name for p in (ROOT / 'src' / 'app').glob('*.?pp'))
    if loose:
        problem(f'src/app/: {", ".join(loose)} outside a room; every workflow lives in one')


def check_checks(text):
    tests = (ROOT / 'tests' / 'CMakeLists.txt').read_text()
    for name, script in re.findall(r'^- `([a-z_]+)` \(`(scripts/[a-z_.-]+)`', text, re.M):
        if not (ROOT / script).is_file():
            problem(f'ARCHITECTURE.md: check `{name}` names {script}, which does not exist')
        if not re.search(rf'add_test\(NAME {name}\b', tests):
            problem(f'ARCHITECTURE.md: check `{name}` is not a test of tests/CMakeLists.txt')


def check_libraries(build):
    table = build / 'generated' / 'modules.tsv'
    if not table.is_file():
        problem(f'{table} is missing; configure the build first')
        return
    modules = {line.split('\t')[1]: line.split('\t')[0]
               for line in table.read_text().splitlines() if line.strip()}
    for folder, name in modules.items():
        expected = 'gpuscope_plots' if folder == 'src/report/plots' else 'gpuscope_' + folder.split('/')[-1]
        if name != expected:
            problem(f'{folder}: library {name}, but ARCHITECTURE.md says {expected}')


def check_docs_index():
    index = ROOT / 'docs' / 'README.md'
    if not index.is_file():
        problem('docs/README.md: missing (the index of docs/)')
        return
    text = index.read_text()
    linked = set(re.findall(r'\]\(([a-z0-9_.-]+\.md)\)', text))
    pages = {p.name for p in (ROOT / 'docs').glob('*.md')} - {'README.md'}
    for page in sorted(pages - linked):
        problem(f'docs/README.md: docs/{page} is not in the index')
    for page in sorted(linked - pages):
        problem(f'docs/README.md: links {page}, which is not in docs/')


def check_issue_numbers():
    """Comments cite docs, never issue numbers: an issue's number says nothing once it is closed."""
    pattern = re.compile(r'\bissues? #?\d+\b', re.I)
    for top in ('src', 'sim', 'tests', 'bench', 'fuzz', 'scripts', 'cmake'):
        for path in sorted((ROOT / top).rglob('*')):
            if not path.is_file() or path.suffix not in {'.cpp', '.hpp', '.h', '.c', '.py', '.sh', '.txt', '.cmake'}:
                continue
            if 'fixtures' in path.parts:
                continue
            for number, line in enumerate(path.read_text(errors='replace').splitlines(), 1):
                if pattern.search(line):
                    problem(f'{path.relative_to(ROOT)}:{number}: cites an issue number; say what it is '
                            'or name the docs page')


def check_schema_version():
    code = (ROOT / 'src' / 'store' / 'schema.hpp').read_text()
    minor = re.search(r'kSchemaMinorVersion = (\d+);', code)
    doc = re.search(r'`schema_minor_version` \(currently \*\*(\d+)\*\*',
                    (ROOT / 'docs' / 'database.md').read_text())
    if not minor or not doc:
        problem('docs/database.md or src/store/schema.hpp: the schema minor version is not found')
    elif minor.group(1) != doc.group(1):
        problem(f'docs/database.md: schema minor {doc.group(1)}, the code writes {minor.group(1)}')


def main():
    text = (ROOT / 'ARCHITECTURE.md').read_text()
    folders = check_folders(text)
    check_rooms(text)
    check_checks(text)
    check_docs_index()
    check_schema_version()
    check_issue_numbers()
    if len(sys.argv) > 1:
        check_libraries(Path(sys.argv[1]))
    for text in problems:
        print(text, file=sys.stderr)
    if problems:
        print(f'architecture: {len(problems)} statement(s) of the map are not true', file=sys.stderr)
        return 1
    print(f'architecture: {len(folders)} folders, their rooms, checks and docs index match the tree')
    return 0


if __name__ == '__main__':
    sys.exit(main())

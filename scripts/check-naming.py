#!/usr/bin/env python3
"""Fails when an enumerator in src/ or sim/ is not UpperCamelCase (CONTRIBUTING.md, "Naming"):
`enum class State { Idle, Running }`, never `idle` or `kIdle`.

One shape is allowed besides: an unscoped enum whose enumerators are all bit masks, each
kUpperCamelCase with an explicit power-of-two value (`enum DeviceFlags : std::uint32_t {
kDeviceHasUuid = 1, kDeviceHasPci = 2 }`). Its enumerators are integer constants at namespace
scope, combined with | and tested with &, so they are named as constants.

Enums are found in the sources with comments, strings and preprocessor lines blanked; each
enumerator is the first name of a comma-separated item of the body. A macro call in the body
(`GPUSCOPE_NVML_ENTRY_POINTS(X)`, an X-macro list) is skipped: the names it makes are checked
where the list is written. tests/scripts/check_naming_test.py feeds it each shape."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'", re.S)
# `enum`, `enum class` or `enum struct`, perhaps a name, perhaps an underlying type, then `{`.
ENUM = re.compile(r'\benum\b(\s+(?:class|struct)\b)?\s*(\w+)?\s*(:\s*[\w:\s]+?)?\s*\{')
UPPER_CAMEL = re.compile(r'[A-Z][A-Za-z0-9]*')
CONSTANT = re.compile(r'k[A-Z][A-Za-z0-9]*')
MACRO_CALL = re.compile(r'\s*[A-Za-z_]\w*\s*\(')
BIT_VALUE = re.compile(r'(0[xX][0-9a-fA-F]+|0[bB][01]+|\d+)[uUlL]*|1[uUlL]*\s*<<\s*\d+')


def blank(text):
    """Comments, strings, character literals and preprocessor lines replaced by spaces,
    newlines kept."""
    def keep_lines(match):
        return re.sub(r'[^\n]', ' ', match.group(0))
    text = TOKEN.sub(keep_lines, text)
    return re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', keep_lines, text, flags=re.M)


def closing(code, start, opening, close):
    """The index just past the bracket that closes the one at `start`."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == opening:
            depth += 1
        elif code[i] == close:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(code)


def items(body):
    """(offset in body, text) of each top-level comma-separated item of an enum's body."""
    found, depth, begin = [], 0, 0
    for i, c in enumerate(body):
        if c in '([{':
            depth += 1
        elif c in ')]}':
            depth -= 1
        elif c == ',' and depth == 0:
            found.append((begin, body[begin:i]))
            begin = i + 1
    found.append((begin, body[begin:]))
    return found


def without_macro_calls(item):
    """`item` with the macro calls that lead it removed, and how many characters they took."""
    skipped = 0
    while True:
        call = MACRO_CALL.match(item)
        if not call:
            return item, skipped
        end = closing(item, call.end() - 1, '(', ')')
        skipped += end
        item = item[end:]


def enumerators(text):
    """(enum name, scoped, [(line, enumerator, value or None)]) of every enum in `text`."""
    code = blank(text)
    found = []
    for match in ENUM.finditer(code):
        body_start = match.end()
        body_end = closing(code, match.end() - 1, '{', '}') - 1
        listed = []
        for offset, item in items(code[body_start:body_end]):
            rest, skipped = without_macro_calls(item)
            name = re.match(r'\s*(\w+)\s*(?:=\s*(.*?))?\s*$', rest, re.S)
            if not name:
                continue
            position = body_start + offset + skipped + name.start(1)
            line = code.count('\n', 0, position) + 1
            value = name.group(2)
            listed.append((line, name.group(1), value.strip() if value else None))
        found.append((match.group(2) or '(anonymous)', bool(match.group(1)), listed))
    return found


def is_power_of_two(value):
    if value is None or not BIT_VALUE.fullmatch(value):
        return False
    if '<<' in value:
        return True
    number = int(re.sub(r'[uUlL]+$', '', value), 0)
    return number > 0 and number & (number - 1) == 0


def is_bit_mask_enum(scoped, listed):
    """An unscoped enum of kUpperCamelCase bit masks, each with its power-of-two value."""
    return not scoped and bool(listed) and all(
        CONSTANT.fullmatch(name) and is_power_of_two(value) for _, name, value in listed)


def check(root):
    """(problems, number of enums, number of enumerators) for the tree at `root`."""
    problems = []
    enums = count = 0
    sources = sorted(p for folder in ('src', 'sim') if (root / folder).is_dir()
                     for p in (root / folder).rglob('*') if p.suffix in ('.cpp', '.hpp', '.h'))
    for path in sources:
        where = path.relative_to(root)
        for enum, scoped, listed in enumerators(path.read_text(errors='replace')):
            enums += 1
            count += len(listed)
            if is_bit_mask_enum(scoped, listed):
                continue
            for line, name, _ in listed:
                if not UPPER_CAMEL.fullmatch(name):
                    problems.append(f'{where}:{line}: enumerator {name} of {enum} is not '
                                    f'UpperCamelCase (CONTRIBUTING.md, "Naming")')
    return problems, enums, count


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT  # another tree: the checker's test
    problems, enums, count = check(root)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'naming: {len(problems)} enumerators not UpperCamelCase', file=sys.stderr)
        return 1
    print(f'naming: {count} enumerators in {enums} enums, all UpperCamelCase')
    return 0


if __name__ == '__main__':
    sys.exit(main())

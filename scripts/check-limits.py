#!/usr/bin/env python3
"""Fails when the house limits are broken (CONTRIBUTING.md, "Where code goes"):
no function in src/ or sim/ longer than 100 lines (from the first line of its signature to its
closing brace), src/cli/ at most 1,600 lines in all and no file of it over 250.

Functions are found by a brace scanner over the clang-formatted sources (comments, strings and
character literals blanked first): a block opened at namespace, class or file scope whose head
ends in a parameter list (a `)`, then perhaps const/noexcept/override/a trailing return type or
a constructor's initializer list) is a function; lambdas and local classes inside it count as
its lines."""
import re
import sys
from pathlib import Path

MAX_FUNCTION_LINES = 100
MAX_CLI_LINES = 1600
MAX_CLI_FILE_LINES = 250
ROOT = Path(__file__).resolve().parent.parent

TOKEN = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(\s]*)\((?:.|\n)*?\)\1"|"(?:\\.|[^"\\\n])*"|'
                   r"'(?:\\.|[^'\\\n])*'", re.S)


def blank(text):
    """Comments, strings and character literals replaced by spaces, newlines kept."""
    def keep_lines(match):
        return re.sub(r'[^\n]', ' ', match.group(0))
    text = TOKEN.sub(keep_lines, text)
    # Preprocessor lines (with their continuations) are not code a brace scanner should see.
    return re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', keep_lines, text, flags=re.M)


SCOPE_HEAD = re.compile(r'^\s*(template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b', re.S)
FUNCTION_TAIL = re.compile(
    r'\)\s*(const\s*)?(noexcept(\s*\([^)]*\))?\s*)?(override\s*|final\s*)*(->\s*[\w:<>,\s*&]+)?\s*$', re.S)
INITIALIZER = re.compile(r'\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]', re.S)
CONTROL = re.compile(r'^\s*(if|for|while|switch|catch|do|else|return)\b')


def functions(text):
    """(name, first line, last line) of every function definition in `text`."""
    code = blank(text)
    found = []
    stack = []  # per open brace: 'scope', 'function', 'other'
    head_start = 0
    i = 0
    while i < len(code):
        c = code[i]
        if c == '{':
            head = code[head_start:i]
            inside_function = 'function' in stack or 'other' in stack
            kind = 'other'
            if not inside_function:
                stripped = head.strip()
                if SCOPE_HEAD.match(stripped) or stripped == '':
                    kind = 'scope'
                elif '=' in stripped.split('(')[0] or stripped.endswith('='):
                    kind = 'other'  # an initializer
                elif (FUNCTION_TAIL.search(stripped) or INITIALIZER.search(stripped)) and \
                        not CONTROL.match(stripped):
                    kind = 'function'
                    start = code.count('\n', 0, head_start + len(head) - len(head.lstrip())) + 1
                    name = re.findall(r'([~\w:]+)\s*\(', stripped)
                    stack.append(kind)
                    found.append([name[0] if name else '?', start, None, len(stack)])
                    head_start = i + 1
                    i += 1
                    continue
                elif re.search(r'\b(class|struct|union|enum)\b', stripped) and '(' not in stripped:
                    kind = 'scope'
            stack.append(kind)
            head_start = i + 1
        elif c == '}':
            if stack:
                depth = len(stack)
                kind = stack.pop()
                if kind == 'function':
                    for f in reversed(found):
                        if f[2] is None and f[3] == depth:
                            f[2] = code.count('\n', 0, i) + 1
                            break
            head_start = i + 1
        elif c == ';':
            head_start = i + 1
        elif c == ':' and not inside_scope_colon(code, i) and stack and stack[-1] == 'scope':
            # access specifiers (public:) end a head too
            head_start = i + 1
        i += 1
    return [(f[0], f[1], f[2]) for f in found if f[2] is not None]


def inside_scope_colon(code, i):
    """Whether the ':' at i is part of '::' or an initializer list rather than 'public:'."""
    if code[i - 1:i] == ':' or code[i + 1:i + 2] == ':':
        return True
    line_start = code.rfind('\n', 0, i) + 1
    return re.fullmatch(r'\s*(public|private|protected)\s*', code[line_start:i]) is None


def main():
    problems = []
    sources = sorted(p for folder in ('src', 'sim') for p in (ROOT / folder).rglob('*')
                     if p.suffix in ('.cpp', '.hpp'))
    longest = []
    for path in sources:
        for name, first, last in functions(path.read_text(errors='replace')):
            lines = last - first + 1
            longest.append((lines, f'{path.relative_to(ROOT)}:{first} {name}'))
            if lines > MAX_FUNCTION_LINES:
                problems.append(f'{path.relative_to(ROOT)}:{first}: {name} is {lines} lines '
                                f'(at most {MAX_FUNCTION_LINES}: split it into named steps)')
    cli_total = 0
    for path in sorted((ROOT / 'src' / 'cli').glob('*')):
        if path.suffix not in ('.cpp', '.hpp'):
            continue
        n = path.read_text().count('\n')
        cli_total += n
        if n > MAX_CLI_FILE_LINES:
            problems.append(f'{path.relative_to(ROOT)}: {n} lines (src/cli/ files: at most '
                            f'{MAX_CLI_FILE_LINES}; move what the command does to src/app/)')
    if cli_total > MAX_CLI_LINES:
        problems.append(f'src/cli/: {cli_total} lines in all (at most {MAX_CLI_LINES}: src/cli/ '
                        f'only parses and dispatches; workflows go to src/app/)')
    if '--list' in sys.argv:
        for lines, where in sorted(longest, reverse=True)[:25]:
            print(f'{lines:5} {where}')
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'limits: {len(problems)} broken', file=sys.stderr)
        return 1
    print(f'limits: {len(longest)} functions in {len(sources)} files, none over '
          f'{MAX_FUNCTION_LINES} lines; src/cli/ {cli_total} lines')
    return 0


if __name__ == '__main__':
    sys.exit(main())

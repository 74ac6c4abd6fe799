#!/usr/bin/env python3
"""Fails when the house limits are broken (CONTRIBUTING.md, "Where code goes"):
no function in src/ or sim/ longer than 100 lines (from the first line of its signature to its
closing brace), no file there over 600 lines, src/cli/ at most 1,600 lines in all and no file of
it over 250.

Functions are found by a brace scanner over the clang-formatted sources (comments, strings and
character literals blanked first): a block opened at namespace, class or file scope whose head
ends in a parameter list (a `)`, then perhaps const/noexcept/override/a trailing return type, a
requires-clause or a constructor's initializer list) is a function, operators included; so is a
function-try-block (`void f() try {`), whose handlers count as its lines, and a lambda outside
any function (`const auto f = [](int x) {` at namespace scope, or in a table's initializer).
Lambdas and local classes inside a function count as its lines.
tests/scripts/check_limits_test.py feeds it each shape."""
import re
import sys
from pathlib import Path

MAX_FUNCTION_LINES = 100
MAX_FILE_LINES = 600
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


SCOPE_HEAD = re.compile(r'^\s*(namespace|class|struct|union|enum|extern)\b', re.S)
# What may follow a function's parameter list: cv and ref qualifiers, noexcept, virt-specifiers,
# a trailing return type.
FUNCTION_TAIL = re.compile(
    r'\)\s*(const\s*)?(&{1,2}\s*)?(noexcept(\s*\([^)]*\))?\s*)?(override\s*|final\s*)*'
    r'(->\s*[\w:<>,\s*&]+)?\s*$', re.S)
INITIALIZER = re.compile(r'\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]', re.S)
CONTROL = re.compile(r'^\s*(if|for|while|switch|catch|do|else|return)\b')
# A lambda's introducer and declarator at the end of a head: [captures](params) mutable -> T
LAMBDA_TAIL = re.compile(
    r'\[[^\[\]]*\]\s*(\((?:[^()]|\([^()]*\))*\))?\s*(mutable\s*|constexpr\s*|noexcept\s*)*'
    r'(->\s*[\w:<>,\s*&]+)?\s*$', re.S)
# A function-try-block: the signature, `try`, perhaps a constructor's initializer list.
FUNCTION_TRY = re.compile(r'^(?P<signature>.*?)\s*\btry\b\s*(:.*)?$', re.S)
OPERATOR = re.compile(r'\boperator\s*(\(\s*\)|\[\s*\]|[^\s\w(]+|[\w\s:<>*&]+?(?=\s*\())')


def without_template_heads(head):
    """`head` with its `template <...>` parameter lists removed (their defaults hold '=')."""
    out = []
    i = 0
    for match in re.finditer(r'\btemplate\s*<', head):
        if match.start() < i:
            continue
        out.append(head[i:match.start()])
        depth, j = 1, match.end()
        while j < len(head) and depth:
            depth += {'<': 1, '>': -1}.get(head[j], 0)
            j += 1
        i = j
    out.append(head[i:])
    return ''.join(out)


def without_requires_clause(head):
    """`head` with a trailing requires-clause (`void f(T) requires C<T>`) removed."""
    for match in reversed(list(re.finditer(r'\brequires\b', head))):
        before = head[:match.start()].rstrip()
        if FUNCTION_TAIL.search(before):
            return before
    return head


def is_function_head(head):
    """Whether a block whose head (namespace or class scope) is `head` is a function body."""
    if CONTROL.match(head):
        return False
    head = without_requires_clause(head)
    return bool(FUNCTION_TAIL.search(head) or INITIALIZER.search(head))


def function_name(head):
    operator = OPERATOR.search(head)
    if operator:
        qualifier = re.search(r'([\w:]*::)\s*operator\b', head)
        symbol = re.sub(r'\s+', '', operator.group(1))
        if symbol[:1].isalpha() or symbol[:1] == '_':  # a conversion: operator bool
            symbol = ' ' + ' '.join(operator.group(1).split())
        return (qualifier.group(1) if qualifier else '') + 'operator' + symbol
    name = re.findall(r'([~\w:]+)\s*\(', head)
    return name[0] if name else '?'


def lambda_name(head):
    name = re.search(r'(\w+)\s*(\{\s*)?=\s*\[[^\[\]]*\]\s*[^\[\]]*$', head)
    return name.group(1) if name else 'lambda'


def functions(text):
    """(name, first line, last line) of every function definition in `text`: functions, operators
    and constructors at namespace or class scope (requires-clauses and function-try-blocks
    included, a try-block's handlers counted as its lines) and lambdas outside functions (at
    namespace scope or in a table's initializer)."""
    code = blank(text)
    found = []
    stack = []  # per open brace: 'scope', 'function', 'handler', 'other'
    head_start = 0
    try_function = None  # the entry of a function-try-block just closed, for its handlers
    i = 0

    def line_of(position):
        return code.count('\n', 0, position) + 1

    def open_function(name, head, start):
        stack.append('function')
        first = line_of(start + len(head) - len(head.lstrip()))
        found.append([name, first, None, len(stack), False])
        return found[-1]

    while i < len(code):
        c = code[i]
        if c == '{':
            head = code[head_start:i]
            stripped = head.strip()
            in_function = 'function' in stack or 'handler' in stack
            # A try-block's handlers follow it at its own depth; anything else there ends it.
            handler_of = try_function
            if try_function and len(stack) < try_function[3]:
                try_function = None
            if in_function:
                stack.append('other')
            elif handler_of and handler_of[3] == len(stack) + 1 and \
                    re.match(r'catch\s*\(', stripped):
                stack.append('handler')
                try_function = handler_of
            elif LAMBDA_TAIL.search(stripped):
                open_function(lambda_name(stripped), head, head_start)
            elif 'other' in stack:
                stack.append('other')  # an initializer's braces
            else:
                core = without_template_heads(stripped).strip()
                signature = core.split('(')[0]
                is_try = FUNCTION_TRY.match(core)
                if SCOPE_HEAD.match(core) or core == '':
                    stack.append('scope')
                elif '=' in OPERATOR.sub('operator', signature) or core.endswith('='):
                    stack.append('other')  # an initializer
                elif is_try and is_function_head(is_try.group('signature')):
                    open_function(function_name(core), head, head_start)[4] = True
                elif is_function_head(core):
                    open_function(function_name(core), head, head_start)
                elif re.search(r'\b(class|struct|union|enum)\b', core) and '(' not in core:
                    stack.append('scope')
                else:
                    stack.append('other')
            head_start = i + 1
        elif c == '}':
            if stack:
                depth = len(stack)
                kind = stack.pop()
                if kind == 'function':
                    for f in reversed(found):
                        if f[2] is None and f[3] == depth:
                            f[2] = line_of(i)
                            if f[4]:
                                try_function = f
                            break
                elif kind == 'handler' and try_function:
                    try_function[2] = line_of(i)
            head_start = i + 1
        elif c == ';':
            head_start = i + 1
            if try_function and len(stack) < try_function[3]:
                try_function = None
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


def check(root):
    """(problems, the 25 longest functions, a summary line) for the tree at `root`."""
    problems = []
    sources = sorted(p for folder in ('src', 'sim') for p in (root / folder).rglob('*')
                     if p.suffix in ('.cpp', '.hpp'))
    longest = []
    for path in sources:
        text = path.read_text(errors='replace')
        where = path.relative_to(root)
        for name, first, last in functions(text):
            lines = last - first + 1
            longest.append((lines, f'{where}:{first} {name}'))
            if lines > MAX_FUNCTION_LINES:
                problems.append(f'{where}:{first}: {name} is {lines} lines '
                                f'(at most {MAX_FUNCTION_LINES}: split it into named steps)')
        n = text.count('\n')
        if n > MAX_FILE_LINES:
            problems.append(f'{where}: {n} lines (at most {MAX_FILE_LINES}: a file this long is '
                            f'two things; split it along one axis)')
    cli_total = 0
    for path in sorted((root / 'src' / 'cli').glob('*')):
        if path.suffix not in ('.cpp', '.hpp'):
            continue
        n = path.read_text().count('\n')
        cli_total += n
        if n > MAX_CLI_FILE_LINES:
            problems.append(f'{path.relative_to(root)}: {n} lines (src/cli/ files: at most '
                            f'{MAX_CLI_FILE_LINES}; move what the command does to src/app/)')
    if cli_total > MAX_CLI_LINES:
        problems.append(f'src/cli/: {cli_total} lines in all (at most {MAX_CLI_LINES}: src/cli/ '
                        f'only parses and dispatches; workflows go to src/app/)')
    summary = (f'limits: {len(longest)} functions in {len(sources)} files, none over '
               f'{MAX_FUNCTION_LINES} lines, no file over {MAX_FILE_LINES}; src/cli/ '
               f'{cli_total} lines')
    return problems, sorted(longest, reverse=True)[:25], summary


def main():
    problems, longest, summary = check(ROOT)
    if '--list' in sys.argv:
        for lines, where in longest:
            print(f'{lines:5} {where}')
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f'limits: {len(problems)} broken', file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == '__main__':
    sys.exit(main())

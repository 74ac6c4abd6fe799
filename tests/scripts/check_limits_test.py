#!/usr/bin/env python3
"""scripts/check-limits.py finds every shape of function definition, measures it from the first
line of its head to its last closing brace, and counts the lines of src/ and sim/ files."""
import importlib.util
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location('check_limits', ROOT / 'scripts' / 'check-limits.py')
limits = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(limits)


def found(source):
    """(name, first line, last line) of the functions the checker sees in `source`."""
    return limits.functions(textwrap.dedent(source).lstrip('\n'))


class FunctionShapes(unittest.TestCase):
    def test_plain_function_and_member(self):
        self.assertEqual(found('''
            namespace gpuscope {
            int add(int a, int b) {
              return a + b;
            }
            struct S {
              int get() const noexcept {
                return 1;
              }
            };
            }  // namespace gpuscope
        '''), [('add', 2, 4), ('get', 6, 8)])

    def test_operator_bodies(self):
        self.assertEqual(found('''
            struct Point {
              int x;
              bool operator==(const Point& other) const {
                return x == other.x;
              }
              bool operator<(const Point& other) const { return x < other.x; }
              int operator()(int a, int b) const {
                int sum = a + b;
                return sum;
              }
              Point& operator=(const Point& other) {
                x = other.x;
                return *this;
              }
              explicit operator bool() const { return x != 0; }
            };
            bool operator!=(const Point& a, const Point& b) {
              return !(a == b);
            }
        '''), [('operator==', 3, 5), ('operator<', 6, 6), ('operator()', 7, 10),
               ('operator=', 11, 14), ('operator bool', 15, 15), ('operator!=', 17, 19)])

    def test_namespace_scope_lambdas(self):
        self.assertEqual(found('''
            namespace {
            const auto square = [](int x) {
              if (x > 0) {
                return x * x;
              }
              return -x * x;
            };
            constexpr auto kTable = [] {
              return 3;
            }();
            const std::map<int, std::function<int(int)>> kHandlers = {
                {1, [](int x) -> int {
                   return x + 1;
                 }},
            };
            }  // namespace
        '''), [('square', 2, 7), ('kTable', 8, 10), ('lambda', 12, 14)])

    def test_lambdas_inside_a_function_are_its_lines(self):
        self.assertEqual(found('''
            int f() {
              const auto g = [](int x) {
                return x;
              };
              return g(1);
            }
        '''), [('f', 1, 6)])

    def test_requires_clauses(self):
        self.assertEqual(found('''
            template <typename T>
            void f(T value) requires std::integral<T> {
              use(value);
            }
            template <typename T, typename U = int>
            int g(T value) noexcept requires(sizeof(T) > 4 && Small<U>) {
              return 1;
            }
            template <typename T>
              requires std::floating_point<T>
            T h(T value) {
              return value;
            }
        '''), [('f', 1, 4), ('g', 5, 8), ('h', 9, 13)])

    def test_function_try_blocks(self):
        self.assertEqual(found('''
            void f() try {
              work();
            } catch (const std::exception& e) {
              report(e);
            } catch (...) {
              report();
            }
            Reader::Reader(std::string path) try : path_(std::move(path)) {
              open();
            } catch (const Error&) {
              throw;
            }
            void g() {
              try {
                work();
              } catch (...) {
              }
            }
        '''), [('f', 1, 7), ('Reader::Reader', 8, 12), ('g', 13, 18)])

    def test_not_functions(self):
        self.assertEqual(found('''
            namespace gpuscope {
            enum class Kind { kA, kB };
            const std::vector<int> kValues = {1, 2, 3};
            int kArray[3] = {1, 2, 3};
            [[nodiscard]] int f();
            struct S {
              int x{3};
              std::vector<int> v{1, 2};
            };
            template <typename T>
            concept Small = requires(T t) { t.size(); };
            }  // namespace gpuscope
        '''), [])


class FileLengths(unittest.TestCase):
    def test_files_over_the_limit_fail(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / 'src' / 'cli').mkdir(parents=True)
            (root / 'sim').mkdir()
            (root / 'src' / 'short.cpp').write_text('int f() {\n  return 1;\n}\n')
            (root / 'sim' / 'long.cpp').write_text('// a line\n' * (limits.MAX_FILE_LINES + 1))
            problems, _, _ = limits.check(root)
            self.assertEqual(len(problems), 1)
            self.assertIn('sim/long.cpp: 601 lines', problems[0])

    def test_long_functions_fail(self):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            (root / 'src' / 'cli').mkdir(parents=True)
            body = '  work();\n' * 99
            (root / 'src' / 'long.cpp').write_text(
                f'void ok() {{\n{body[:-10]}}}\n'
                f'struct S {{\n  bool operator==(const S&) const {{\n{body}  }}\n}};\n')
            problems, _, _ = limits.check(root)
            self.assertEqual(problems, ['src/long.cpp:102: operator== is 101 lines (at most 100: '
                                        'split it into named steps)'])


if __name__ == '__main__':
    unittest.main()

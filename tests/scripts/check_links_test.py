#!/usr/bin/env python3
"""scripts/check-links.py on two small archives built here: a module that calls into another
passes when it declares it, fails when it does not (even when a module it declares does), and
fails when it declares a module its layer row does not allow. Inline functions every includer
carries are not calls into another module."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / 'scripts' / 'check-links.py'


def archive(folder, name, source):
    """Compiles `source` into folder/lib<name>.a."""
    cpp = folder / f'{name}.cpp'
    cpp.write_text(textwrap.dedent(source))
    obj = folder / f'{name}.o'
    subprocess.run(['c++', '-c', '-o', str(obj), str(cpp)], check=True)
    lib = folder / f'lib{name}.a'
    subprocess.run(['ar', 'rcs', str(lib), str(obj)], check=True)
    return lib


class CheckLinks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix='check-links-')
        self.addCleanup(self.tmp.cleanup)
        self.dir = Path(self.tmp.name)
        (self.dir / 'generated').mkdir()
        self.low = archive(self.dir, 'low', '''
            int low_value() { return 4; }
            inline int shared_inline() { return 2; }
            int use_inline() { return shared_inline(); }
        ''')
        self.mid = archive(self.dir, 'mid', '''
            int low_value();
            int mid_value() { return low_value() + 1; }
        ''')
        self.top = archive(self.dir, 'top', '''
            int low_value();
            inline int shared_inline() { return 2; }
            int top_value() { return low_value() + shared_inline(); }
        ''')
        self.layers = self.dir / 'layers.sh'
        self.layers.write_text(textwrap.dedent('''
            declare -A allowed=(
              [src/low]="low"
              [src/mid]="mid low"
              [src/top]="top mid low"
            )
        '''))

    def run_check(self, top_declares, low_row='low'):
        rows = [('gpuscope_low', 'src/low', self.low, ''),
                ('gpuscope_mid', 'src/mid', self.mid, 'gpuscope_low'),
                ('gpuscope_top', 'src/top', self.top, top_declares)]
        table = ''.join(f'{n}\t{f}\t{a}\t{d}\n' for n, f, a, d in rows)
        (self.dir / 'generated' / 'modules.tsv').write_text(table)
        text = self.layers.read_text().replace('[src/low]="low"', f'[src/low]="{low_row}"')
        self.layers.write_text(text)
        env = dict(os.environ, GPUSCOPE_LAYER_TABLE=str(self.layers))
        return subprocess.run([sys.executable, str(CHECK), str(self.dir)], capture_output=True,
                              text=True, env=env)

    def test_declared_calls_pass(self):
        result = self.run_check('gpuscope_mid gpuscope_low')
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn('3 modules', result.stdout)

    def test_a_call_reached_through_another_module_fails(self):
        result = self.run_check('gpuscope_mid')
        self.assertEqual(result.returncode, 1)
        self.assertIn('gpuscope_top calls into gpuscope_low', result.stderr)
        self.assertIn('low_value()', result.stderr)
        self.assertNotIn('shared_inline', result.stderr)

    def test_a_declaration_outside_the_layer_fails(self):
        result = self.run_check('gpuscope_mid gpuscope_low')
        self.assertEqual(result.returncode, 0, result.stderr)
        rows = [('gpuscope_low', 'src/low', self.low, 'gpuscope_top')]
        (self.dir / 'generated' / 'modules.tsv').write_text(
            ''.join(f'{n}\t{f}\t{a}\t{d}\n' for n, f, a, d in rows) +
            f'gpuscope_top\tsrc/top\t{self.top}\tgpuscope_low\n')
        env = dict(os.environ, GPUSCOPE_LAYER_TABLE=str(self.layers))
        result = subprocess.run([sys.executable, str(CHECK), str(self.dir)], capture_output=True,
                                text=True, env=env)
        self.assertEqual(result.returncode, 1)
        self.assertIn('gpuscope_low declares gpuscope_top (top/)', result.stderr)

    def test_a_missing_table_says_what_to_do(self):
        result = subprocess.run([sys.executable, str(CHECK), str(self.dir / 'nowhere')],
                                capture_output=True, text=True)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('configure the build first', result.stderr)


if __name__ == '__main__':
    unittest.main()

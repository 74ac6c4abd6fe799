#!/usr/bin/env python3
"""scripts/check-naming.py on small trees written here: UpperCamelCase enumerators pass in every
shape an enum is written in (scoped or not, in a class, with an underlying type, values,
comments, preprocessor lines, an X-macro list); snake_case and kUpperCamelCase ones fail,
named by file:line; unscoped kUpperCamelCase bit masks with power-of-two values are the one
shape allowed besides."""
import importlib.util
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / 'scripts' / 'check-naming.py'
SPEC = importlib.util.spec_from_file_location('check_naming', SCRIPT)
naming = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(naming)


class CheckNaming(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix='check-naming-')
        self.addCleanup(self.tmp.cleanup)
        self.root = Path(self.tmp.name)
        (self.root / 'src' / 'core').mkdir(parents=True)
        (self.root / 'sim').mkdir()

    def problems(self, source, path='src/core/kinds.hpp'):
        (self.root / path).write_text(textwrap.dedent(source).lstrip('\n'))
        return naming.check(self.root)[0]

    def test_upper_camel_case_passes_in_every_shape(self):
        self.assertEqual(self.problems('''
            #pragma once
            #include <cstdint>
            namespace gpuscope {
            enum class State { Idle, Running, Done };
            enum class Mode : std::uint32_t {
              Fast = 1,          // a comment with snake_case words and kStyle ones
              Slow = 2,          /* and a block comment: not_a_name */
              Careful = 1 << 2,  // "a_string"
            };
            enum Plain { First, Second, };
            enum class Both : unsigned char {
            #if defined(SOMETHING)
              Extra,
            #endif
              Usual = static_cast<unsigned char>(f(1, 2)),
              Last
            };
            class Reader {
             public:
              enum class Phase { Opening, Reading };
             private:
              enum class Internal : int { Fresh = -1, Live = Fresh + 1 };
              Phase phase_ = Phase::Opening;
            };
            enum class Forward : int;
            enum Plain first = First;
            }  // namespace gpuscope
        '''), [])

    def test_x_macro_enumerators_are_not_read_as_names(self):
        source = '''
            #define ENTRY_ENUM(id, ...) id,
            enum class Entry : std::size_t {
              ENTRY_POINTS(ENTRY_ENUM, ENTRY_ENUM,
                           ENTRY_ENUM) Count
            };
            enum class Other { FROM_LIST(x_macro, other_one), Tail };
        '''
        self.assertEqual(self.problems(source, 'sim/entries.hpp'), [])
        self.assertEqual(self.problems(source.replace(') Count', ') kCount'), 'sim/entries.hpp'),
                         ['sim/entries.hpp:4: enumerator kCount of Entry is not UpperCamelCase '
                          '(CONTRIBUTING.md, "Naming")'])

    def test_snake_case_fails_with_file_and_line(self):
        self.assertEqual(self.problems('''
            namespace gpuscope {
            enum class DomainKind {
              Package,
              dram,  // a comment
              not_added = 4,
            };
            }  // namespace gpuscope
        '''), ['src/core/kinds.hpp:4: enumerator dram of DomainKind is not UpperCamelCase '
               '(CONTRIBUTING.md, "Naming")',
               'src/core/kinds.hpp:5: enumerator not_added of DomainKind is not UpperCamelCase '
               '(CONTRIBUTING.md, "Naming")'])

    def test_k_style_fails_in_a_class_and_in_sim(self):
        problems = self.problems('''
            struct Session {
              enum class Which { kAmdSmi, kRocmSmi };
            };
            enum class Violation : std::size_t { PowerCap, kCount };
        ''', 'sim/session.hpp')
        self.assertEqual([p.split(' (')[0] for p in problems],
                         ['sim/session.hpp:2: enumerator kAmdSmi of Which is not UpperCamelCase',
                          'sim/session.hpp:2: enumerator kRocmSmi of Which is not UpperCamelCase',
                          'sim/session.hpp:4: enumerator kCount of Violation is not '
                          'UpperCamelCase'])

    def test_bit_masks_may_be_constants_in_an_unscoped_enum_only(self):
        masks = '''
            enum DeviceFlags : std::uint32_t {
              kDeviceHasUuid = 1,
              kDeviceHasPci = 0x2,
              kDeviceMig = 1u << 2,  // a comment
            };
        '''
        self.assertEqual(self.problems(masks), [])
        self.assertEqual(len(self.problems(masks.replace('enum ', 'enum class '))), 3)
        # Not a bit mask: a value that is no power of two, or no value at all.
        self.assertEqual(len(self.problems(masks.replace('0x2', '3'))), 3)
        self.assertEqual(len(self.problems(masks.replace(' = 0x2', ''))), 3)
        # All of them constants, or the enum is an ordinary one.
        self.assertEqual(len(self.problems(masks.replace('kDeviceMig', 'DeviceMig'))), 2)

    def test_the_script_exits_non_zero_and_names_what_is_wrong(self):
        (self.root / 'src' / 'core' / 'good.hpp').write_text('enum class Good { One, Two };\n')
        passed = subprocess.run([sys.executable, str(SCRIPT), str(self.root)],
                                capture_output=True, text=True)
        self.assertEqual(passed.returncode, 0, passed.stderr)
        self.assertIn('naming: 2 enumerators in 1 enums', passed.stdout)
        (self.root / 'sim' / 'bad.cpp').write_text('namespace {\nenum Bad { kOne = 3 };\n}\n')
        failed = subprocess.run([sys.executable, str(SCRIPT), str(self.root)],
                                capture_output=True, text=True)
        self.assertEqual(failed.returncode, 1)
        self.assertIn('sim/bad.cpp:2: enumerator kOne of Bad is not UpperCamelCase',
                      failed.stderr)


if __name__ == '__main__':
    unittest.main()

#!/usr/bin/env python3
"""The man pages against the program's own --help (tests/packaging/CMakeLists.txt).

For gpuscope and each command its --help lists: the page exists, man renders it without a
warning (MANWIDTH=80 man --warnings -l), every option --help prints is in the rendered page, the
program's page names every command, and every option of the page's examples is an option of the
command it runs (so an example cannot outlive an option).

Usage: check_man_pages.py GPUSCOPE MAN_DIR
"""
import os
import re
import shlex
import subprocess
import sys

gpuscope, man_dir = sys.argv[1], sys.argv[2]
failures = []


def help_text(*command):
    return subprocess.run([gpuscope, *command, "--help"], check=True, capture_output=True,
                          text=True).stdout


def help_options(text):
    """Option names of a --help text: the first column of its lines that start with a dash."""
    names = set()
    for line in text.splitlines():
        match = re.match(r"^  (-[^ ]+)", line)
        if match:
            names.update(re.sub(r"\{[^}]*\}", "", match.group(1)).split(","))
    return names


def commands(text):
    """The commands of the program's --help (its Subcommands section)."""
    found, inside = [], False
    for line in text.splitlines():
        if line.strip() in ("Subcommands:", "SUBCOMMANDS:"):
            inside = True
        elif inside and re.match(r"^  [a-z]", line):
            found.append(line.split()[0])
        elif inside and line.strip() and not line.startswith("  "):
            inside = False
    return found


def render(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
    result = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                            env=env)
    if result.returncode != 0 or result.stderr.strip():
        failures.append(f"{page}: man --warnings says: {result.stderr.strip() or result.returncode}")
    text = re.sub(r".\x08", "", result.stdout)  # overstrike bold and underline, if any
    # groff may print a minus sign or a hyphen as Unicode; options are typed with ASCII dashes
    return text.replace("\u2212", "-").replace("\u2010", "-")


def check_examples(text, page, command_options):
    section = re.search(r"\nEXAMPLES\n(.*?)\nSEE ALSO\n", text, re.S)
    if not section:
        failures.append(f"{page}: no EXAMPLES section")
        return
    for line in section.group(1).splitlines():
        try:
            words = shlex.split(line.rstrip("\\"))
        except ValueError:  # a line of a command continued over several
            words = line.split()
        if "gpuscope" not in words:
            continue
        words = words[words.index("gpuscope") + 1:]
        if not words or words[0] not in command_options:
            continue
        for word in words[1:]:
            if word == "--":
                break
            name = word.split("=")[0]
            if (re.match(r"^--?[A-Za-z]", name) and name not in command_options[words[0]]
                    and name not in ("-pts", "-plb")):  # gssr's spellings (docs/gssr.md)
                failures.append(f"{page}: the example '{line.strip()}' uses {name}, which "
                                f"'gpuscope {words[0]} --help' does not list")


top_help = help_text()
# `gpuscope help` with no option is the program's own help (the hidden command that writes these)
plain_help = subprocess.run([gpuscope, "help"], check=True, capture_output=True, text=True).stdout
if plain_help != top_help:
    failures.append("'gpuscope help' does not print what 'gpuscope --help' does")
names = commands(top_help)
if len(names) < 10:
    failures.append(f"found only {names} as commands in gpuscope --help")
options = {name: help_options(help_text(name)) for name in names}
top_options = help_options(top_help)
pages = [(None, "gpuscope.1", top_options)] + [(n, f"gpuscope-{n}.1", options[n]) for n in names]
for command, file_name, wanted in pages:
    page = os.path.join(man_dir, file_name)
    if not os.path.exists(page):
        failures.append(f"{page} is missing ('gpuscope {command} --help' has it)")
        continue
    text = render(page)
    words = set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", text))
    for option in sorted(wanted - words):
        failures.append(f"{file_name}: {option} is in --help but not in the page")
    if command is None:
        for name in names:
            if f"gpuscope-{name}(1)" not in text.replace("\n", " "):
                failures.append(f"{file_name}: does not name gpuscope-{name}(1)")
    check_examples(text, file_name, options)
extra = set(os.listdir(man_dir)) - {p[1] for p in pages}
if extra:
    failures.append(f"pages of no command in {man_dir}: {sorted(extra)}")

for failure in failures:
    print("FAIL:", failure)
print(f"check_man_pages: {len(pages)} pages, {sum(len(p[2]) for p in pages)} options, "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)

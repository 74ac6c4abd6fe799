#!/usr/bin/env python3
"""The packaging recipes against CMake (docs/install.md, "How the recipes are checked").

Reads, without running Spack, EasyBuild or dpkg:
  - CMake's dependencies: every find_package and pkg_check_modules of the project's CMake files
    that is REQUIRED and outside the tests' and benchmarks' blocks, and CMake's project version;
  - packaging/spack/packages/gpuscope/package.py, parsed with Python's ast: the class, its
    version() and depends_on() calls;
  - packaging/easybuild/*.eb, parsed with ast too (an easyconfig is Python): name, version,
    easyblock, dependencies, builddependencies, sanity_check_paths;
  - debian/control's Build-Depends and debian/changelog's version, CHANGELOG.md's latest version.
Each CMake dependency must be in every recipe (through the name table below) and each recipe
dependency must be a CMake one or a build tool; the versions must be CMake's. With a build tree,
the easyconfig's sanity_check_paths must exist in a real `cmake --install` of it.

Usage: check_recipes.py SOURCE_DIR [BUILD_DIR]
"""
import ast
import glob
import os
import re
import subprocess
import sys
import tempfile

source = sys.argv[1]
build = sys.argv[2] if len(sys.argv) > 2 else None
failures = []

# CMake's name (find_package, or pkg-config module) → Spack's, EasyBuild's and Debian's.
NAMES = {
    "fmt": ("fmt", "fmt", "libfmt-dev"),
    "CLI11": ("cli11", "CLI11", "libcli11-dev"),
    "nlohmann_json": ("nlohmann-json", "nlohmann_json", "nlohmann-json3-dev"),
    "tl-expected": ("tl-expected", "tl-expected", "libexpected-dev"),
    "cpp-httplib": ("cpp-httplib", "cpp-httplib", "libcpp-httplib-dev"),
    "libevent_core": ("libevent", "libevent", "libevent-dev"),
    "CURL": ("curl", "cURL", "libcurl4-openssl-dev"),
    "yaml-cpp": ("yaml-cpp", "yaml-cpp", "libyaml-cpp-dev"),
    "OpenSSL": ("openssl", "OpenSSL", "libssl-dev"),
    "SQLite3": ("sqlite", "SQLite", "libsqlite3-dev"),
    "ZLIB": ("zlib-api", "zlib", "zlib1g-dev"),
    "plplot": ("plplot", "PLplot", "libplplot-dev"),
    "PkgConfig": ("pkgconfig", "pkgconf", "pkg-config"),
}
# What the recipes may need that is not a find_package: the compiler, build tools, the system.
TOOLS = {
    "spack": {"cxx", "cmake", "ninja", "cuda"},  # cuda: only with +cupti (CUPTI is optional)
    "easybuild": {"binutils", "CMake", "Ninja"},
    "debian": {"debhelper-compat", "cmake", "ninja-build", "libcrypt-dev"},  # crypt.h: serve's bcrypt
}
# Found by CMake but not a package: the system's threads, git for --version.
NOT_PACKAGES = {"Threads", "Git"}


def cmake_dependencies():
    """REQUIRED find_package/pkg_check_modules names outside test and benchmark blocks."""
    found, version = set(), None
    for path in glob.glob(f"{source}/**/CMakeLists.txt", recursive=True) + glob.glob(
            f"{source}/cmake/*.cmake"):
        rel = os.path.relpath(path, source)
        if rel.split(os.sep)[0] in ("tests", "bench", "fuzz", "web") or rel.startswith("build"):
            continue
        conditions = []
        for line in open(path, encoding="utf-8"):
            line = line.split("#")[0].strip()
            if re.match(r"^if\s*\(", line):
                conditions.append(line)
            elif re.match(r"^endif\s*\(", line) and conditions:
                conditions.pop()
            if any(re.search(r"TESTS|BENCHMARKS|FUZZ", c) for c in conditions):
                continue
            match = re.match(r"^project\(gpuscope VERSION ([0-9.]+)", line)
            if match:
                version = match.group(1)
            match = re.match(r"^find_package\((\S+)(.*)\)", line)
            if match and "REQUIRED" in match.group(2) and match.group(1) not in NOT_PACKAGES:
                found.add(match.group(1))
            match = re.match(r"^pkg_check_modules\(\S+ (.*)\)", line)
            if match:
                words = [w for w in match.group(1).split() if w not in (
                    "REQUIRED", "IMPORTED_TARGET", "GLOBAL", "QUIET")]
                found.add(words[0])
    return found, version


def spack_recipe():
    path = f"{source}/packaging/spack/packages/gpuscope/package.py"
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if len(classes) != 1 or classes[0].name != "Gpuscope":
        failures.append(f"{path}: wants one class Gpuscope")
        return set(), []
    cls = classes[0]
    if [b.id for b in cls.bases if isinstance(b, ast.Name)] != ["CMakePackage"]:
        failures.append(f"{path}: Gpuscope is not a CMakePackage")
    deps, versions = set(), []
    for call in ast.walk(cls):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.args):
            continue
        first = call.args[0]
        if not isinstance(first, ast.Constant):
            continue
        if call.func.id == "depends_on":
            deps.add(re.split(r"[@+~ ]", first.value)[0])
        elif call.func.id == "version":
            versions.append(first.value)
    return deps, versions


def easyconfig():
    paths = glob.glob(f"{source}/packaging/easybuild/*.eb")
    if len(paths) != 1:
        failures.append(f"wants one easyconfig in packaging/easybuild, found {paths}")
        return {}, paths
    tree = ast.parse(open(paths[0], encoding="utf-8").read(), paths[0])
    fields = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            # SYSTEM (EasyBuild's toolchain constant) is the one name an easyconfig may use here
            text = ast.unparse(node.value).replace("SYSTEM", "'SYSTEM'")
            try:
                fields[node.targets[0].id] = ast.literal_eval(text)
            except ValueError:
                fields[node.targets[0].id] = text
    return fields, paths


def compare(kind, index, deps, cmake):
    wanted = {NAMES[c][index] for c in cmake if c in NAMES}
    for name in sorted(c for c in cmake if c not in NAMES):
        failures.append(f"CMake finds {name}, which the check's name table does not know: "
                        f"add it to NAMES in {os.path.basename(__file__)} and to the recipes")
    for name in sorted(wanted - deps):
        failures.append(f"{kind}: CMake needs {name}, the recipe does not depend on it")
    for name in sorted(deps - wanted - TOOLS[kind]):
        failures.append(f"{kind}: the recipe depends on {name}, which CMake does not find")


cmake, version = cmake_dependencies()
if not version or len(cmake) < 8:
    failures.append(f"read only {sorted(cmake)} and version {version} from CMake")

spack_deps, spack_versions = spack_recipe()
compare("spack", 0, spack_deps, cmake)
numbered = [v for v in spack_versions if re.match(r"^[0-9.]+$", v)]
if not numbered or max(numbered, key=lambda v: [int(x) for x in v.split(".")]) != version:
    failures.append(f"spack: newest version {numbered} is not CMake's {version}")

eb, eb_paths = easyconfig()
if eb:
    if eb.get("name") != "gpuscope" or eb.get("version") != version:
        failures.append(f"easybuild: name/version {eb.get('name')}/{eb.get('version')}, "
                        f"CMake's is gpuscope/{version}")
    if eb.get("easyblock") != "CMakeMake":
        failures.append(f"easybuild: easyblock {eb.get('easyblock')}, wants CMakeMake")
    if not os.path.basename(eb_paths[0]).startswith(f"gpuscope-{version}-"):
        failures.append(f"easybuild: {eb_paths[0]} is not named gpuscope-{version}-...")
    deps = {d[0] for d in eb.get("dependencies", []) + eb.get("builddependencies", [])}
    compare("easybuild", 1, deps, cmake)

control = open(f"{source}/debian/control", encoding="utf-8").read()
build_depends = re.search(r"^Build-Depends:(.*?)^\S", control, re.S | re.M).group(1)
build_depends = re.sub(r"(?m)^\s*#.*$", "", build_depends)
debian = {re.split(r"[ (]", d.strip())[0] for d in build_depends.split(",") if d.strip()}
compare("debian", 2, debian, cmake)
changelog = open(f"{source}/debian/changelog", encoding="utf-8").readline()
match = re.match(r"^gpuscope \(([^)-]+)(-[^)]*)?\)", changelog)
if not match or match.group(1) != version:
    failures.append(f"debian/changelog's version ({changelog.strip()}) is not CMake's {version}")
changes = open(f"{source}/CHANGELOG.md", encoding="utf-8").read()
match = re.search(r"^## \[?([0-9][0-9.]*)\]?", changes, re.M)
if not match or match.group(1) != version:
    failures.append(f"CHANGELOG.md's latest version ({match and match.group(1)}) is not CMake's "
                    f"{version}")

if build and eb:
    with tempfile.TemporaryDirectory() as prefix:
        subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                       stdout=subprocess.DEVNULL)
        paths = eb.get("sanity_check_paths", {})
        for path in paths.get("files", []) + paths.get("dirs", []):
            if not os.path.exists(os.path.join(prefix, path)):
                failures.append(f"easybuild: sanity_check_paths has {path}, which "
                                f"cmake --install does not install")
        # slurm.conf's MailProg (docs/fleet.md): a link beside gpuscope, not a copy.
        mail = os.path.join(prefix, "bin", "gpuscope-mail")
        if not os.path.islink(mail) or os.readlink(mail) != "gpuscope":
            failures.append("cmake --install does not put bin/gpuscope-mail, a link to gpuscope, "
                            "beside gpuscope")

for failure in failures:
    print("FAIL:", failure)
print(f"check_recipes: CMake {version} needs {', '.join(sorted(cmake))}; "
      f"{len(failures)} failures")
sys.exit(1 if failures else 0)

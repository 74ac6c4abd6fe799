#!/usr/bin/env bash
# scripts/check-includes.sh on small trees: types declared in the namespace of a layer a folder
# may not use fail it, with their file and line; the same in an allowed layer, in comments, in
# std's namespace, inside a function or as a friend do not; a known offender is let through.
# Includes: a folder its layer may not use, <sqlite3.h> outside src/store/, and a store header
# that reaches sqlite3.h through another fail it; a store header that does not passes.
set -euo pipefail
check=$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-includes.sh
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree"/src/{app/profile,collect,util,core,analyze} "$tree/sim"
fail() { echo "check_includes_test: $*" >&2; exit 1; }

cat > "$tree/src/collect/reader.hpp" <<'CPP'
namespace gpuscope::nvml {
class Session;  // collect/ may use nvml/
}
namespace gpuscope::collect {
struct Reader {
  friend class Other;
};
}  // namespace gpuscope::collect
CPP
cat > "$tree/src/core/types.hpp" <<'CPP'
// namespace gpuscope::store { class Writer; }
namespace std {
template <>
struct hash<gpuscope::Thing>;
}
namespace gpuscope {
inline const char* text = "namespace gpuscope::store { class Writer; }";
inline int size() {
  struct stat st;
  return 0;
}
}  // namespace gpuscope
CPP
mkdir -p "$tree/src/core"
cat > "$tree/src/core/sweep.hpp" <<'CPP'
namespace gpuscope::sweep {
struct Trial;
}
CPP
if ! out=$("$check" "$tree" 2>&1); then
  fail "a tree that follows the layers failed: $out"
fi

cat > "$tree/src/app/watch.hpp" <<'CPP'
namespace gpuscope {
namespace nvml {
class Device;
}
namespace dcgm {
struct Field;
}
}  // namespace gpuscope
CPP
cat > "$tree/src/util/error.hpp" <<'CPP'
namespace gpuscope {
class Error;
}
CPP
cat > "$tree/src/analyze/mode.cpp" <<'CPP'
namespace gpuscope::store::detail {
enum class Mode : int;
}
CPP
if out=$("$check" "$tree" 2>&1); then
  fail "declarations in other layers' namespaces passed: $out"
fi
for expected in \
  "src/app/watch.hpp:3: declares class Device in gpuscope::nvml, which belongs to src/nvml/" \
  "src/app/watch.hpp:6: declares struct Field in gpuscope::dcgm, which belongs to src/dcgm/" \
  "src/util/error.hpp:2: declares class Error in gpuscope, which belongs to src/core/" \
  "src/analyze/mode.cpp:2: declares enum class Mode in gpuscope::store::detail, which belongs to src/store/"; do
  grep -qF "$expected" <<<"$out" || fail "expected \"$expected\" in: $out"
done
[ "$(grep -c ': declares ' <<<"$out")" -eq 4 ] || fail "expected exactly 4 declarations in: $out"
# Includes, on a tree of their own.
inc=$(mktemp -d)
trap 'rm -rf "$tree" "$inc"' EXIT
mkdir -p "$inc"/src/{util,core,store,report,kernels}
printf '#include "core/error.hpp"\n' >"$inc/src/util/x.hpp"
printf '#include <sqlite3.h>\n' >"$inc/src/report/y.cpp"
printf '#include "store/sqlite.hpp"\n' >"$inc/src/store/db.hpp"
printf '#include "store/db.hpp"\n' >"$inc/src/store/run.hpp"
printf '#include "store/clean.hpp"\n' >"$inc/src/store/plain.hpp"
printf 'int a;\n' >"$inc/src/store/clean.hpp"
printf '#include "store/run.hpp"\n#include "store/plain.hpp"\n' >"$inc/src/kernels/z.cpp"
if out=$("$check" "$inc" 2>&1); then fail "wrong includes passed: $out"; fi
for expected in \
  'src/util/x.hpp: includes "core/...", which src/util/ may not use' \
  'src/report/y.cpp: includes <sqlite3.h>; only src/store/ may' \
  'src/kernels/z.cpp: includes store/run.hpp, which brings sqlite3.h out of src/store/'; do
  grep -qF "$expected" <<<"$out" || fail "expected \"$expected\" in: $out"
done
grep -q 'plain.hpp' <<<"$out" && fail "a store header without SQLite was refused: $out"
grep -qF 'includes: 3 wrong' <<<"$out" || fail "expected 3 findings in: $out"
echo "check_includes_test: passed"

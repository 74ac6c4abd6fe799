# Sourced by the browser tests after they set source_dir and output_dir: finds Chromium (skips
# with 77 when it is absent), checks that playwright-core is installed in web/, makes $work (a
# temporary directory removed on exit) and the output directory.
chromium=${GPUSCOPE_CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
  echo "SKIP: chromium is not installed (scripts/setup.sh installs Debian's chromium)"
  exit 77
fi
if [ ! -d "$source_dir/web/node_modules/playwright-core" ]; then
  echo "FAIL: $source_dir/web/node_modules/playwright-core is missing; run scripts/setup.sh (npm ci in web/)"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$output_dir"

#!/usr/bin/env bash
# The site report (gpuscope jobs -o site.html) in a real Chromium: a small site whose figures
# are known, hostile names included, and a year of a 2,000-node site (365 daily bins, 100 top
# jobs, 50 users), both written by tests/report/site_report_fixture.cpp; checked by
# site_report_browser_test.mjs, which also prints how long the big page takes to load and draw.
# Skips (77) only when chromium is absent.
# Usage: site_report_browser_test.sh FIXTURE SOURCE_DIR OUTPUT_DIR
set -euo pipefail
fixture=$1
source_dir=$2
output_dir=$3

. "$source_dir/tests/integration/browser_env.sh"
"$fixture" "$work/small.html" "$work/big.html"
cd "$source_dir/web"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/site_report_browser_test.mjs" \
  "$work/small.html" "$work/big.html" "$output_dir/site-small.png" "$output_dir/site-big.png"

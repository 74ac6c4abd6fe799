#!/usr/bin/env bash
# A big run's HTML report in a real Chromium: the report of 600 GPUs written with small limits
# (tests/report/big_report_fixture.cpp), so that its heatmap rows are groups of GPUs, its per-GPU
# series coarser and its tables paged, as a 10,000-GPU report's are; report_big_browser_test.mjs
# checks that it draws, pages, sorts and finds a GPU. Skips (77) only when chromium is absent.
# Usage: report_big_browser_test.sh FIXTURE SOURCE_DIR OUTPUT_DIR
set -euo pipefail
fixture=$1
source_dir=$2
output_dir=$3

. "$source_dir/tests/integration/browser_env.sh"
"$fixture" "$work/big.html"
cd "$source_dir/web"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_big_browser_test.mjs" \
  "$work/big.html" "$output_dir/report-big.png"

#!/usr/bin/env bash
# The kernel lanes of the HTML report in a real Chromium: profile simulated GPUs with
# --trace-kernels around fake_cuda_job (tests/trace: the real injection library loaded as CUDA
# loads it, and two processes playing traced CUDA workers on GPUs 1 and 2), `gpuscope report`,
# and check the lanes through playwright-core (kernels_browser_test.mjs): 600 kernels as slices,
# then 80 000 as bins. Skips (77) only when chromium is absent.
# Usage: kernels_browser_test.sh GPUSCOPE FAKE_CUDA_JOB SOURCE_DIR OUTPUT_DIR
set -euo pipefail
gpuscope=$1
fake_job=$2
source_dir=$3
output_dir=$4

. "$source_dir/tests/integration/browser_env.sh"
export GPUSCOPE_SIM_TIME_SCALE=4

uuids=$("$gpuscope" devices --simulate h100x4-straggler --json | node -e '
  let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const d = JSON.parse(s).devices; console.log(d[1].uuid + "," + d[2].uuid); });')

# 2 processes × 300 kernels, one every 3 ms (about 1 s each): slices.
"$gpuscope" profile --simulate h100x4-straggler -q -s 50 -o "$work/run.db" --trace-kernels -- \
  "$fake_job" --uuid "$uuids" --fork 1 --kernels 300 --spacing-us 3000 > /dev/null
"$gpuscope" report "$work/run.db" -o "$work/kernels.html"
# 2 × 40 000 kernels, one every 25 µs: more than the report draws one by one, so bins.
"$gpuscope" profile --simulate h100x4-straggler -q -s 50 -o "$work/big.db" --trace-kernels -- \
  "$fake_job" --uuid "$uuids" --fork 1 --kernels 40000 --spacing-us 25 > /dev/null
"$gpuscope" report "$work/big.db" -o "$work/kernels-binned.html"

cd "$source_dir/web"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/kernels_browser_test.mjs" \
  "$work/kernels.html" "$output_dir/kernels.png" slices 2
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/kernels_browser_test.mjs" \
  "$work/kernels-binned.html" "$output_dir/kernels-binned.png" bins 2
echo "PASS: screenshots in $output_dir"

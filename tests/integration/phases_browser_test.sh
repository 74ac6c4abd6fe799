#!/usr/bin/env bash
# The phase lane and table of the HTML report in a real Chromium: a job marks load, epochs and a
# checkpoint with `gpuscope mark` under `profile --simulate` of the phase scenario, `gpuscope
# report`, and phases_browser_test.mjs checks them through playwright-core. Skips (77) only when
# chromium is absent. Then a run of 16 000 phases: the lane in bins.
# Usage: phases_browser_test.sh GPUSCOPE SOURCE_DIR OUTPUT_DIR
set -euo pipefail
gpuscope=$1
source_dir=$2
output_dir=$3

. "$source_dir/tests/integration/browser_env.sh"
export GPUSCOPE_SIM_STATE="$work/sim-state.json"
m="$gpuscope mark"
"$gpuscope" profile --simulate "$source_dir/tests/fixtures/scenarios/phases.json" -q -s 50 \
  -o "$work/run.db" -- sh -c "$m begin load; sleep 0.9; $m end load;
    for e in 1 2; do $m begin epoch --instance \$e; sleep 0.6; $m begin step; sleep 0.3; $m end step; $m end epoch; done;
    $m begin checkpoint; sleep 1.5; $m end checkpoint"
"$gpuscope" report "$work/run.db" -o "$work/phases.html"
# 8000 steps each holding a forward (16 000 instances): more than the report lists, so bins.
cat > "$work/many.py" <<'PY'
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(os.environ["GPUSCOPE_MARK_SOCKET"])
def mark(kind, name):
    s.sendall(("GSM1\t%s\t%d\t%d\t\t\t%s\n" % (kind, time.monotonic_ns(), os.getpid(), name)).encode())
for i in range(8000):
    mark("begin", "step"); mark("begin", "forward"); time.sleep(0.0001); mark("end", "forward"); mark("end", "step")
PY
"$gpuscope" profile --simulate "$source_dir/tests/fixtures/scenarios/phases.json" -q -s 50 \
  -o "$work/many.db" -- python3 "$work/many.py"
"$gpuscope" report "$work/many.db" -o "$work/phases-binned.html"
cd "$source_dir/web"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/phases_browser_test.mjs" \
  "$work/phases.html" "$output_dir/phases.png" 4 slices
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/phases_browser_test.mjs" \
  "$work/phases-binned.html" "$output_dir/phases-binned.png" 2 bins
echo "PASS: screenshot in $output_dir"

#!/usr/bin/env bash
# The HTML report in a real Chromium: profile a simulated straggler run (with captured output),
# `gpuscope report` it, open the file headless through playwright-core and check that it drew
# (report_browser_test.mjs). Also a merged two-rank run. Skips (77) only when chromium is absent.
# A sweep database's report has the sweep section (report_sweep_test.mjs), when SWEEP_WORKLOAD is
# given. gssr's fixture folder's report shows gssr's figures (report_gssr_test.mjs).
# Usage: report_browser_test.sh GPUSCOPE SOURCE_DIR OUTPUT_DIR [SWEEP_WORKLOAD]
set -euo pipefail
gpuscope=$1
source_dir=$2
output_dir=$3
sweep_workload=${4:-}

. "$source_dir/tests/integration/browser_env.sh"
export GPUSCOPE_SIM_TIME_SCALE=4

# One run: 4 scenario seconds per wall second, 3 s of wall time, output lines as marks. The job
# names its own process to the simulated driver (on GPU 0) and a process outside the job uses
# GPU 2: the processes section lists both, the outsider in red and diagnosed.
sleep 30 &
outsider=$!
trap 'kill $outsider 2>/dev/null || true; rm -rf "$work"' EXIT
export GPUSCOPE_SIM_PROCESSES_FILE=$work/processes.txt
echo "2 $outsider 2048" >"$GPUSCOPE_SIM_PROCESSES_FILE"
"$gpuscope" profile --simulate h100x4-straggler -q -s 50 -o "$work/run.db" --capture-output \
  --process-sampling-ms 250 \
  --wrap 'echo "0 $$ 1024" >>"$GPUSCOPE_SIM_PROCESSES_FILE"; echo "epoch 1 starts"; sleep 1.5; echo "epoch 1 </script> done"; sleep 1.5'
# The grid as it was: one-second periods over the run (the report draws them beside power).
start_s=$(sqlite3 "$work/run.db" "SELECT start_wall_ns / 1000000000 FROM runs")
{
  echo "start,g_per_kwh"
  for i in $(seq 0 5); do echo "$((start_s + i)),$((100 + 50 * i))"; done
} >"$work/grid.csv"
"$gpuscope" report "$work/run.db" -o "$work/report.html" --title 'Straggler </script> test' --region DE \
  --carbon-series "$work/grid.csv"
# Refuses to overwrite without -f.
if "$gpuscope" report "$work/run.db" -o "$work/report.html" 2>/dev/null; then
  echo "FAIL: report overwrote an existing file without -f"
  exit 1
fi

unset GPUSCOPE_SIM_PROCESSES_FILE

# Two ranks merged into one database, run at the same time on one scenario timeline (one
# GPUSCOPE_SIM_EPOCH_NS), as the ranks of a real job are: 8 scenario seconds each (idle, warm-up,
# compute), so the straggler is clear in every rank whatever the start-up delay.
epoch_ns=$(date +%s%N)
pids=()
for rank in 0 1; do
  GPUSCOPE_SIM_EPOCH_NS=$epoch_ns SLURM_JOB_ID=7 SLURM_NTASKS=2 SLURM_PROCID=$rank \
    SLURMD_NODENAME=node$rank \
    "$gpuscope" profile --simulate h100x4-straggler -q -s 50 -o "$work/ranks/" -- sleep 2 &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
"$gpuscope" merge "$work/merged.db" "$work/ranks"
"$gpuscope" report "$work/merged.db" -o "$work/merged.html"

# An H100 in MIG mode, 4g + 2g + 1g, each instance with its own load (docs/mig.md).
"$gpuscope" profile --simulate "$source_dir/tests/fixtures/scenarios/h100-mig-mixed.json" -q -s 100 \
  -o "$work/mig.db" -- sleep 2
"$gpuscope" report "$work/mig.db" -o "$work/mig.html"

# A power-limit sweep (3 settings × 2 repeats of a 0.3 s workload on a simulated H100, measured
# between the workload's own work marks) and its report.
if [ -n "$sweep_workload" ]; then
  GPUSCOPE_SIM_TIME_SCALE=10 GPUSCOPE_SIM_STATE="$work/sweep-state.json" "$gpuscope" sweep -q \
    --simulate "$source_dir/tests/fixtures/scenarios/sweep-h100.json" --power-limits 300,500 \
    --repeat 2 --settle 0.05 -s 50 --work-regex 'processed ([0-9.]+) samples' \
    --window-begin 'work begins at ([0-9.]+) s' --window-end 'work ends at ([0-9.]+) s' \
    -o "$work/sweep.db" -- "$sweep_workload" --seconds 0.3 >/dev/null
  "$gpuscope" report "$work/sweep.db" -o "$work/sweep-report.html"
fi

# gssr's fixture folder, read directly, untrimmed as gssr's own summary (docs/gssr.md).
"$gpuscope" report "$source_dir/tests/fixtures/gssr/profile_out_JobID_4242" --detect-outliers none \
  -o "$work/gssr.html"

cd "$source_dir/web"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_gssr_test.mjs" \
  "$work/gssr.html" "$output_dir/report-gssr.png"
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_browser_test.mjs" \
  "$work/report.html" "$output_dir/report.png" 4 1
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_browser_test.mjs" \
  "$work/merged.html" "$output_dir/report-merged.png" 8
GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_mig_test.mjs" \
  "$work/mig.html" "$output_dir/report-mig.png"
if [ -n "$sweep_workload" ]; then
  GPUSCOPE_CHROMIUM="$chromium" node "$source_dir/tests/integration/report_sweep_test.mjs" \
    "$work/sweep-report.html" "$work/sweep.json" "$output_dir/report-sweep.png"
fi
cp "$work/report.html" "$output_dir/report.html"
echo "PASS: screenshots in $output_dir"

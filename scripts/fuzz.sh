#!/usr/bin/env bash
# Builds gpuscope's libFuzzer targets (fuzz/) with clang, ASan and UBSan in build-fuzz, seeds them
# from the project's own scenarios, test fixtures and simulated runs, and runs them:
#   scripts/fuzz.sh smoke               a fixed number of runs per target (CI; a few minutes)
#   scripts/fuzz.sh long SECONDS [T..]  SECONDS per target (all, or the targets named)
#   scripts/fuzz.sh replay              only the saved inputs in fuzz/regressions/
# Every mode first replays fuzz/regressions/<target>/ (inputs that once crashed). Exits non-zero
# on any crash, leak, timeout (10 s per input) or memory past 2 GB. Needs a normal build first
# (scripts/setup.sh: build/bin/gpuscope makes the run-database seeds); installs clang's libFuzzer
# runtime when missing (as root). Findings: build-fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-smoke}
dir=${GPUSCOPE_FUZZ_BUILD_DIR:-build-fuzz}
gpuscope=${GPUSCOPE_BINARY:-build/bin/gpuscope}
all_targets=(fuzz_scenario fuzz_sidecar fuzz_nsys fuzz_text fuzz_run_database fuzz_http fuzz_https fuzz_proc
  fuzz_grid_series fuzz_grid_api fuzz_marks fuzz_gssr fuzz_tsdb_answer fuzz_logs fuzz_smi_table
  fuzz_smi_query fuzz_time_zone fuzz_sacct fuzz_guard)
targets=("${all_targets[@]}")

case $mode in
  smoke | replay) ;;
  long)
    seconds=${2:?usage: scripts/fuzz.sh long SECONDS [TARGET...]}
    if [ $# -gt 2 ]; then targets=("${@:3}"); fi
    ;;
  *) echo "fuzz: unknown mode '$mode' (smoke, long SECONDS, replay)" >&2; exit 2 ;;
esac

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
if ! command -v clang++ >/dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long){return 0;}' |
  clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "fuzz: clang with libFuzzer is missing; apt-get install clang libclang-rt-14-dev (as root)" >&2
    exit 1
  fi
  apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
[ -x "$gpuscope" ] || { echo "fuzz: $gpuscope is missing; run scripts/setup.sh first" >&2; exit 1; }

started=$(date +%s)
if [ ! -f "$dir/CMakeCache.txt" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  generator=()
  if command -v ninja >/dev/null; then generator=(-G Ninja); fi
  CC=clang CXX=clang++ cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCOPE_FUZZ=ON -DGPUSCOPE_BUILD_TESTS=OFF \
    -DGPUSCOPE_BUILD_BENCHMARKS=OFF >/dev/null
fi
cmake --build "$dir" -j"$(nproc)" --target "${targets[@]}" fuzz_make_seeds
built=$(date +%s)

# Seeds, made fresh each time (nothing is written into the source tree).
seeds=$dir/seeds
rm -rf "$seeds" && for target in "${all_targets[@]}"; do mkdir -p "$seeds/$target"; done
cp scenarios/*.json tests/fixtures/scenarios/*.json "$seeds/fuzz_scenario/"
"$dir/fuzz/fuzz_make_seeds" "$seeds/fuzz_sidecar" "$seeds/fuzz_nsys"
printf '\x00127.0.0.1:9400' >"$seeds/fuzz_text/listen4"
printf '\x00[::1]:9400' >"$seeds/fuzz_text/listen6"
printf '\x01https://user@vm.example:8428/api/v1/import/prometheus' >"$seeds/fuzz_text/push"
printf '\x02700,550,400:100' >"$seeds/fuzz_text/plan"
printf '\x03^step (\\d+) begin t=([0-9.]+)$' >"$seeds/fuzz_text/marker"
"$gpuscope" profile --simulate h100 -q -o "$seeds/fuzz_run_database/h100.db" -- sleep 0.3
"$gpuscope" profile --simulate h100x4-straggler -q --capture-output \
  -o "$seeds/fuzz_run_database/straggler.db" -- sh -c 'echo step 1; sleep 0.3; echo done'
rm -f "$seeds"/fuzz_run_database/*-wal "$seeds"/fuzz_run_database/*-shm
printf '\x04tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\nbasic_auth_users:\n  p: $2b$04$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6\nhttp_server_config: {headers: {X-Frame-Options: deny}}\n' \
  >"$seeds/fuzz_text/web-config"
printf '\x04tls_server_config: {cert_file: a, key_file: b}\nbasic_auth_users:\n  p: $2b$31$pedeqbPZXaD0nuKTEmWk1u6O3sure8qifxljFvlH9nhHWnYfFsuX6\n  p: x\ntls_server_config: {cert_file: c}\n' \
  >"$seeds/fuzz_text/web-config-twice"
printf '\x05Basic cHJvbWV0aGV1czpodW50ZXIy' >"$seeds/fuzz_text/authorization"
# fuzz_https serves TLS with a throwaway self-signed certificate made here.
export GPUSCOPE_FUZZ_TLS_DIR=$dir/tls
mkdir -p "$GPUSCOPE_FUZZ_TLS_DIR"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$GPUSCOPE_FUZZ_TLS_DIR/server.key" \
  -out "$GPUSCOPE_FUZZ_TLS_DIR/server.crt" -days 30 -subj /CN=127.0.0.1 2>/dev/null
printf '\x01GET /metrics HTTP/1.1\r\nHost: a\r\nAuthorization: Basic cDpodW50ZXIy\r\n\r\n' >"$seeds/fuzz_https/get"
printf '\x01GET /x HTTP/1.1\r\nAuthorization: Basic !!!\r\n\r\nHEAD / HTTP/1.1\r\n\r\n' >"$seeds/fuzz_https/bad-auth"
printf '\x00GET /metrics HTTP/1.1\r\n\r\n' >"$seeds/fuzz_https/plain"
printf '\x00\x16\x03\x01\x00\x05\x01\x00\x00\x01\x03' >"$seeds/fuzz_https/short-hello"
printf 'GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n' >"$seeds/fuzz_http/get"
printf 'HEAD /metrics HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n' >"$seeds/fuzz_http/head"
printf 'POST /healthz HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello' >"$seeds/fuzz_http/post"
printf 'GET /metrics?x=%%zz HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab' >"$seeds/fuzz_http/odd"
printf '\x0012:memory:/kubepods/burstable/pod1b2c3d4e-0000-4000-8000-00000000abcd/%s\n0::/\n' \
  "$(printf 'ab%.0s' {1..32})" >"$seeds/fuzz_proc/kubepods"
printf '\x000::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n' >"$seeds/fuzz_proc/slurm"
printf '\x01OMPI_COMM_WORLD_RANK=3\0OMPI_COMM_WORLD_SIZE=4\0PMIX_NAMESPACE=a/../b\0' >"$seeds/fuzz_proc/ompi"
printf '\x01RANK=1\0WORLD_SIZE=2\0TORCHELASTIC_RUN_ID=..\0' >"$seeds/fuzz_proc/torch"
# Grid intensity series as tests/carbon/series_file_test.cpp writes them: CSV periods, point
# readings (Electricity Maps' export), offsets across a DST change, JSON lists and {"data": ...}.
printf '# our figures\nstart,end,g_per_kwh\n2026-11-25T13:00Z,2026-11-25T13:30Z,180\n2026-11-25T13:30Z,2026-11-25T14:00Z,95.5\n' \
  >"$seeds/fuzz_grid_series/periods.csv"
printf 'datetime,carbonIntensity\n2026-11-25T14:00Z,300\n2026-11-25T13:00Z,100\n' >"$seeds/fuzz_grid_series/points.csv"
printf 'timestamp,g_per_kwh\n2026-10-25T01:00:00+01:00,150\n2026-10-25T01:30:00.25+01:00,140\n1795611600,130\n' \
  >"$seeds/fuzz_grid_series/offsets.csv"
printf '[{"from": "2026-11-25T13:00Z", "to": "2026-11-25T13:30Z", "intensity": 210},
  {"from": "2026-11-25T13:30Z", "to": "2026-11-25T14:00Z", "intensity": "190"}]' >"$seeds/fuzz_grid_series/list.json"
printf '{"data": [{"timestamp": 1795611600, "g_per_kwh": 42}]}' >"$seeds/fuzz_grid_series/data.json"
# Grid API answers as tests/carbon/*_test.cpp's stand-in servers give them; the first byte picks
# the parser: 0 the UK national answer, 1 its regional one, 2 Electricity Maps.
uk_periods='[{"from": "2026-11-25T13:00Z", "to": "2026-11-25T13:30Z", "intensity": {"forecast": 200, "actual": 100, "index": "moderate"}},
  {"from": "2026-11-25T13:30Z", "to": "2026-11-25T14:00Z", "intensity": {"forecast": 210, "actual": null, "index": "moderate"}}]'
printf '\x00{"data": %s}' "$uk_periods" >"$seeds/fuzz_grid_api/uk-national"
printf '\x01{"data": {"regionid": 12, "dnoregion": "SSE South", "shortname": "South England", "data": %s}}' \
  "$uk_periods" >"$seeds/fuzz_grid_api/uk-regional"
printf '\x02{"zone": "DE", "data": [{"zone": "DE", "carbonIntensity": 300, "datetime": "2026-11-25T23:00:00.000Z", "emissionFactorType": "lifecycle", "isEstimated": false},
  {"zone": "DE", "carbonIntensity": 320, "datetime": "2026-11-26T00:00:00.000Z", "isEstimated": true}]}' \
  >"$seeds/fuzz_grid_api/electricity-maps"
printf '\x02{"zone": "DE", "history": [{"carbonIntensity": 310.5, "datetime": "2026-11-25T23:00:00Z"}]}' \
  >"$seeds/fuzz_grid_api/electricity-maps-history"
# Marks as tests/unit/phases_marks_test.cpp sends them: a begin with every field, a point whose
# name holds tabs and control characters, a name past kMaxNameBytes in two-byte characters.
printf 'GSM1\tbegin\t123456789012\t4242\t4243\t17\tforward pass\n' >"$seeds/fuzz_marks/begin"
printf 'GSM1\tpoint\t5\t1\t\t\tsave\tto\x01disk\n' >"$seeds/fuzz_marks/point"
printf 'GSM1\tend\t5\t1\t\t\tx%s\n' "$(printf '\xc3\xa9%.0s' {1..261})" >"$seeds/fuzz_marks/long-name"
# gssr's files as the tests' fixtures have them: process files (first byte 0) and the export (1).
# Each series cut to its first four values (Python's NaN words kept), so inputs stay small.
for file in tests/fixtures/gssr/profile_out_JobID_4242/*/*_proc_[01].json; do
  { printf '\x00'; python3 -c 'import re, sys
print(re.sub(r"\[([^][]*)\]", lambda m: "[" + ",".join(m.group(1).split(",")[:4]) + "]",
             open(sys.argv[1]).read()), end="")' "$file"; } >"$seeds/fuzz_gssr/$(basename "$file")"
done
# The export cut to four samples per GPU (16 KB), so each run of the target is quick.
cp tests/fixtures/gssr/train-4242.sqlite "$seeds/small-export.sqlite"
sqlite3 "$seeds/small-export.sqlite" 'DELETE FROM data WHERE sample_index > 3; VACUUM;'
{ printf '\x01'; cat "$seeds/small-export.sqlite"; } >"$seeds/fuzz_gssr/export.sqlite"
rm -f "$seeds/small-export.sqlite"

# Prometheus-API answers as tests/tsdb/answer_test.cpp and the real servers give them; the first
# byte picks the reader: 0 a query's answer, 1 /api/v1/series, 2 export lines, 3 the site file.
printf '\x00{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"gpuscope_power_watts","uuid":"GPU-1","pod":"train-0"},"values":[[1795611600,"150.5"],[1795611615.25,"NaN"],["1795611630","+Inf"]]}]},"warnings":["w"],"isPartial":true}' \
  >"$seeds/fuzz_tsdb_answer/matrix"
printf '\x00{"status":"success","data":{"resultType":"vector","result":[{"metric":{"namespace":"ml","pod":"train-0","uid":"5d9b"},"value":[1795611600.123,"1795600000"]}]}}' \
  >"$seeds/fuzz_tsdb_answer/vector"
printf '\x00{"status":"success","data":{"resultType":"scalar","result":[1795611600,"-Inf"]}}' >"$seeds/fuzz_tsdb_answer/scalar"
printf '\x00{"status":"error","errorType":"bad_data","error":"exceeded maximum resolution of 11,000 points per timeseries"}' \
  >"$seeds/fuzz_tsdb_answer/error"
printf '\x01{"status":"success","data":[{"__name__":"kube_pod_info","namespace":"ml","pod":"train-0","node":"gpu-node-1"},{"__name__":"up"}]}' \
  >"$seeds/fuzz_tsdb_answer/series"
printf '\x02{"metric":{"__name__":"DCGM_FI_DEV_POWER_USAGE","UUID":"GPU-2"},"values":[1.5,NaN,-Inf,Inf],"timestamps":[1795611600000,1795611615000,1795611630000,1795611645000]}\n{"metric":{},"values":[],"timestamps":[]}\n' \
  >"$seeds/fuzz_tsdb_answer/export"
printf '\x03# the site'"'"'s server\nurl = https://vm.example:8428/select/0/prometheus\nbearer_token_file = /etc/gpuscope/token\nca_file = /etc/ssl/ca.pem\ninsecure_skip_verify = false\ntimeout = 2m\n' \
  >"$seeds/fuzz_tsdb_answer/site"
# Logs as the tests' fixtures have them (first byte: 0 nvidia-smi CSV, 1 dmon, 2 dcgmi dmon;
# second: the read options), cut to their first 40 lines so that each run stays quick.
seed_log() {  # seed_log FORMAT-BYTE OPTIONS-BYTE FILE
  { printf "\\x$1\\x$2"; head -n 40 "$3"; } >"$seeds/fuzz_logs/$1$2-$(basename "$3")"
}
for file in tests/fixtures/logs/smi-csv-*.csv tests/fixtures/h200-580/smi.csv; do seed_log 00 01 "$file"; done
seed_log 00 05 tests/fixtures/h200-580/job-smi-200ms-noheader-killed.csv
seed_log 00 03 tests/fixtures/logs/smi-csv-4gpu-noindex.csv
for file in tests/fixtures/logs/smi-dmon-*.txt tests/fixtures/h200-580/job-dmon-*.txt; do seed_log 01 09 "$file"; done
for file in tests/fixtures/logs/dcgmi-dmon-*.txt; do seed_log 02 08 "$file"; done
# nvidia-smi's table (first byte: the zone), whole snapshots of each layout and the cut ones.
for file in tests/fixtures/logs/smi-table-*.log; do
  { printf '\x01'; head -n 120 "$file"; } >"$seeds/fuzz_smi_table/$(basename "$file")"
  { printf '\x00'; tail -n 60 "$file"; } >"$seeds/fuzz_smi_table/tail-$(basename "$file")"
done
# nvidia-smi -q (first byte: the zone): a whole block of each driver generation, and the cut tails.
for file in tests/fixtures/logs/smi-query-*.log; do
  { printf '\x01'; head -n 320 "$file"; } >"$seeds/fuzz_smi_query/$(basename "$file")"
  { printf '\x00'; tail -n 200 "$file"; } >"$seeds/fuzz_smi_query/tail-$(basename "$file")"
done
# Time zones (first byte even: a TZif file; odd: a POSIX rule): the system's files where there are.
for zone in Europe/Zurich America/Nuuk Australia/Lord_Howe Africa/Casablanca Europe/Dublin; do
  [ -f "/usr/share/zoneinfo/$zone" ] || continue
  { printf '\x00'; cat "/usr/share/zoneinfo/$zone"; } >"$seeds/fuzz_time_zone/${zone//\//_}"
done
printf '\x01CET-1CEST,M3.5.0,M10.5.0/3' >"$seeds/fuzz_time_zone/zurich-rule"
printf '\x01<-04>4<-03>,M9.1.6/24,M4.1.6/24' >"$seeds/fuzz_time_zone/santiago-rule"
# sacct's allocation lines (fleet::kSacctJobsFields' order): an array task, a component, a job
# without GPUs, one pending, one running, a name with '|' and non-ASCII, a cut-off last line.
{
  printf '1001|1000_4|alice|physics|gpu|COMPLETED|2026-11-25T10:00:00|2026-11-25T11:00:00|n[1-2]|billing=8,cpu=8,gres/gpu:h100=4,gres/gpu=4,mem=64G,node=2|0:0|train\n'
  printf '2001|2000+1|bob|chem|long|FAILED|2026-11-25T09:00:00|2026-11-25T09:30:00|n3|cpu=1,gres/gpu=1,node=1|1:0|a|b "ü"\n'
  printf '3000|3000|carol|physics|cpu|COMPLETED|2026-11-25T08:00:00|2026-11-25T08:10:00|n4|cpu=4,node=1|0:0|cpu only\n'
  printf '4000|4000|dave|physics|gpu|PENDING|Unknown|Unknown|None assigned|gres/gpu=2|0:0|wait\n'
  printf '5000|5000|erin|physics|gpu|RUNNING|2026-11-25T09:50:00|Unknown|n5|gres/gpu:a100=8,node=1|0:0|run\n'
  printf '6000|6000|frank|physics|gpu|TIMEOUT|2026-11-25T07:00:00|2026-11-25T'
} >"$seeds/fuzz_sacct/site"

# guard's inputs, the first byte choosing the reader: squeue's JSON (Slurm 22.05's and 24.11's,
# the tests' fixtures), sinfo's node lines, dcgmi diag's JSON (DCGM 3 and 4), a rules document.
mkdir -p "$seeds/fuzz_guard"
{ printf '\x00'; cat tests/fixtures/squeue/slurm-22.05.json; } >"$seeds/fuzz_guard/squeue-22.05"
{ printf '\x00'; cat tests/fixtures/squeue/slurm-24.11.json; } >"$seeds/fuzz_guard/squeue-24.11"
printf '\x01n1|gpu|idle\nn2|gpu|drained*\nn2|long|drained*\nn3|gpu|mixed~\nbad line\n' \
  >"$seeds/fuzz_guard/sinfo"
{ printf '\x02'; cat tests/fixtures/dcgm-diag/dcgm3-r1-fail.json; } >"$seeds/fuzz_guard/diag-3"
{ printf '\x02'; cat tests/fixtures/dcgm-diag/dcgm4-r1-pass.json; } >"$seeds/fuzz_guard/diag-4"
printf '\x03{"enforce": true, "idle": {"first_warning": "60m", "cancel": "2h", "exempt": {"users": ["a"]}}, "health": {"xids": [79, 48], "max_drained_share": 0.2}}' \
  >"$seeds/fuzz_guard/rules"

status=0
run_target() {  # run_target TARGET LIBFUZZER-ARGS...
  local target=$1
  shift
  local corpus=$dir/corpus/$target artifacts=$dir/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  local extra=(-rss_limit_mb=2048 -timeout=10 -seed=1 -print_final_stats=1
    "-artifact_prefix=$artifacts/")
  # The commands print reports and error lines for every input; libFuzzer still reports findings.
  [ "$target" = fuzz_run_database ] && extra+=(-close_fd_mask=3)
  # libevent's own warnings for each malformed request go to stderr.
  [ "$target" = fuzz_http ] && extra+=(-close_fd_mask=2)
  [ -f "fuzz/$target.dict" ] && extra+=("-dict=fuzz/$target.dict")
  local log=$dir/$target.log
  if ! "$dir/fuzz/$target" "${extra[@]}" "$@" "$corpus" "$seeds/$target" >"$log" 2>&1; then
    echo "fuzz: $target FAILED; see $log and $artifacts" >&2
    grep -E '^==[0-9]+==ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2 || true
    status=1
  fi
  local stats
  stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|cov: ' "$log" |
    tail -4 | tr '\n' ' ')
  echo "fuzz: $target: $stats"
}

for target in "${targets[@]}"; do
  if compgen -G "fuzz/regressions/$target/*" >/dev/null; then
    "$dir/fuzz/$target" -rss_limit_mb=2048 -timeout=10 fuzz/regressions/"$target"/* \
      >"$dir/$target.replay.log" 2>&1 || { echo "fuzz: $target: a saved regression fails again ($dir/$target.replay.log)" >&2; status=1; }
  fi
done

case $mode in
  smoke)
    # Fixed numbers of inputs, so the run is the same on every machine; the database target
    # runs three commands per input.
    run_target fuzz_scenario -runs=30000
    run_target fuzz_sidecar -runs=30000
    run_target fuzz_nsys -runs=3000
    run_target fuzz_text -runs=30000
    run_target fuzz_run_database -runs=400
    run_target fuzz_http -runs=3000
    run_target fuzz_https -runs=600
    run_target fuzz_proc -runs=30000
    run_target fuzz_grid_series -runs=30000
    run_target fuzz_grid_api -runs=30000
    run_target fuzz_marks -runs=30000
    run_target fuzz_gssr -runs=10000
    run_target fuzz_logs -runs=1500
    run_target fuzz_smi_table -runs=1500
    run_target fuzz_smi_query -runs=1500
    run_target fuzz_time_zone -runs=30000
    run_target fuzz_tsdb_answer -runs=30000
    run_target fuzz_sacct -runs=30000
    run_target fuzz_guard -runs=30000
    ;;
  long)
    for target in "${targets[@]}"; do run_target "$target" -max_total_time="$seconds"; done
    ;;
esac
echo "fuzz: $mode: build $((built - started)) s, seeds and runs $(($(date +%s) - built)) s"
exit $status

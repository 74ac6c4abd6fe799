#!/usr/bin/env bash
# gpuscope health-check end to end on simulated GPUs, as Slurm runs it: a healthy node (exit 0,
# in well under a second for 8 GPUs), a GPU with an uncorrected ECC error and a lost GPU (exit 1,
# the reason on stdout), fewer GPUs than expected, --drain running scontrol with the reason
# (a script that logs its arguments), DCGM's diagnostic through a dcgmi script printing DCGM 3's
# and DCGM 4's JSON, and a diagnostic that cannot run (exit 3, no drain).
# Usage: health_check_test.sh GPUSCOPE_BINARY REPO_ROOT
set -euo pipefail
gpuscope=$1
root=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}
contains() {  # contains DESCRIPTION TEXT FILE
  if grep -qF -- "$2" "$3"; then echo "ok: $1"; else echo "FAIL: $1: no '$2' in:"; cat "$3"; failures=$((failures + 1)); fi
}
run() {  # run OUTFILE ARGS...: the exit code
  local out=$1; shift
  local status=0
  "$gpuscope" health-check "$@" >"$out" 2>"$out.err" || status=$?
  echo $status
}
hour_ago=$((($(date +%s) - 3600) * 1000000000))

check "a healthy node of 8 GPUs" 0 "$(run "$work/ok" --simulate h100x8-idle-start --expect-gpus 8 --json)"
python3 - "$work/ok" <<'PY' || failures=$((failures + 1))
import json, sys
d = json.load(open(sys.argv[1]))
assert d["healthy"] and d["checked"] and d["gpus"] == 8 and d["findings"] == [], d
assert d["elapsed_ms"] < 1000, f"took {d['elapsed_ms']} ms"
print(f"ok: 8 GPUs checked in {d['elapsed_ms']} ms")
PY

check "AMD GPUs are GPUs: eight MI300X" 0 "$(run "$work/amd" --simulate mi300x --expect-gpus 8)"
check "an H100 and MI300X node" 0 \
  "$(run "$work/mixed" --simulate "$root/tests/fixtures/scenarios/mixed-h100-mi300x.json" --json)"
check "its GPUs counted" "yes" "$(grep -q '"gpus": [1-9]' "$work/mixed" && echo yes)"

export GPUSCOPE_SIM_EPOCH_NS=$hour_ago  # the scenarios' faults are an hour old
check "an uncorrected ECC error" 1 "$(run "$work/ecc" --simulate "$root/tests/fixtures/scenarios/health-faults.json" --node n7)"
contains "the reason names the GPU and the error" "node n7 unhealthy: gpuscope: GPU 1 (GPU-" "$work/ecc"
contains "the pending remap is a warning" "warning: GPU 1" "$work/ecc"
check "a lost GPU" 1 "$(run "$work/lost" --simulate h100x2-gpu-lost)"
contains "the lost GPU's reason" "GPU 1: cannot be opened" "$work/lost"
check "fewer GPUs than expected" 1 "$(run "$work/few" --simulate h100x2-gpu-lost --expect-gpus 4)"
contains "the count in the reason" "2 of the 4 GPUs expected were found" "$work/few"

cat >"$work/scontrol" <<EOF2
#!/bin/sh
printf '%s\n' "\$@" >"$work/scontrol.args"
EOF2
chmod 755 "$work/scontrol"
export GPUSCOPE_SCONTROL=$work/scontrol
check "--drain on an unhealthy node" 1 "$(run "$work/drain" --simulate h100x2-gpu-lost --node gpu-n3 --drain)"
check "scontrol's arguments, one per line" "update
NodeName=gpu-n3
State=DRAIN
Reason=gpuscope: GPU 1: cannot be opened: nvmlDeviceGetHandleByIndex_v2: GPU is lost (NVML error 15)" "$(cat "$work/scontrol.args")"
contains "the output says it drained" "(drained)" "$work/drain"
rm -f "$work/scontrol.args"
check "--drain on a healthy node drains nothing" 0 "$(run "$work/nodrain" --simulate h100x8-idle-start --drain)"
check "no scontrol for a healthy node" "no" "$([ -e "$work/scontrol.args" ] && echo yes || echo no)"

for version in dcgm3-r1-fail dcgm4-r1-pass dcgm4-runtime-error; do
  printf '#!/bin/sh\necho "$@" >%s\ncat %s\n' "$work/dcgmi.args" \
    "$root/tests/fixtures/dcgm-diag/$version.json" >"$work/dcgmi-$version"
  chmod 755 "$work/dcgmi-$version"
done
check "DCGM 3's failed diagnostic" 1 \
  "$(GPUSCOPE_DCGMI=$work/dcgmi-dcgm3-r1-fail run "$work/d3" --simulate h100x8-idle-start --dcgm-diag 1 --drain --node n1)"
check "dcgmi's arguments" "diag -r 1 -j" "$(cat "$work/dcgmi.args")"
contains "DCGM's words in the reason" "gpuscope: GPU 2: DCGM diagnostic Inforom failed: A row remap failed" "$work/d3"
check "DCGM 4's warning leaves the node healthy" 0 \
  "$(GPUSCOPE_DCGMI=$work/dcgmi-dcgm4-r1-pass run "$work/d4" --simulate h100x8-idle-start --dcgm-diag 1)"
contains "the warning said" "warning: GPU 2: DCGM diagnostic software warned" "$work/d4"
rm -f "$work/scontrol.args"
check "a diagnostic that cannot run: the check is not made" 3 \
  "$(GPUSCOPE_DCGMI=$work/dcgmi-dcgm4-runtime-error run "$work/dx" --simulate h100x8-idle-start --dcgm-diag 1 --drain)"
contains "why" "the check could not be made: DCGM's diagnostic could not run" "$work/dx"
check "and no drain for it" "no" "$([ -e "$work/scontrol.args" ] && echo yes || echo no)"
check "dcgmi not installed: a warning" 0 \
  "$(GPUSCOPE_DCGMI=$work/no-such-dcgmi run "$work/dn" --simulate h100x8-idle-start --dcgm-diag 1)"
contains "the warning" "dcgmi is not installed" "$work/dn"

printf 'health:\n  row_remap_pending: true\n  dcgm_diag: 0\n' >"$work/rules.yaml"
check "the rules make a pending remap a failure" 1 \
  "$(run "$work/strict" --simulate "$root/tests/fixtures/scenarios/health-faults.json" --rules "$work/rules.yaml")"
printf 'health:\n  dcgm_diag: 9\n' >"$work/bad.yaml"
check "a bad rules file is a usage error" 2 "$(run "$work/bad" --simulate h100x8-idle-start --rules "$work/bad.yaml")"
contains "naming the line" "bad.yaml line 2" "$work/bad.err"

[ $failures -eq 0 ] || { echo "$failures failures"; exit 1; }
echo "all health-check checks passed"

#!/usr/bin/env bash
# On a real GPU (docs/validation.md): (1) what the driver answers to the unprivileged MIG calls on
# a GPU with MIG off, against the answers the simulated driver gives (docs/scenarios.md, "MIG");
# (2) gpuscope's own health thread on the real driver: `profile --health-interval 1` of a
# power-capped loop, its health rows, `devices` health and the health families of `serve` in both
# namings; (3) the health benchmarks. Read-only for the GPU: changes no setting, injects no fault.
# Usage: scripts/validate-gpu-mig-health.sh BUNDLE OUT_DIR   (BUNDLE from scripts/gpu-bundle.sh)
set -uo pipefail
bundle=$1
out=$2
mkdir -p "$out"
g=$bundle/bin/gpuscope
cat >"$out/loop.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
time.sleep(2)
end = time.time() + 8
while time.time() < end:
    c = a @ b
torch.cuda.synchronize()
time.sleep(2)
PY
# (1) MIG calls on the whole GPU, MIG off; the process view while a CUDA process runs.
python3 - "$out" >"$out/mig-probe.txt" 2>&1 <<'PY'
import json, subprocess, sys, time
import pynvml as n
out = sys.argv[1]
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
res = {"driver": n.nvmlSystemGetDriverVersion(), "name": n.nvmlDeviceGetName(h)}
def probe(name, fn):
    try:
        v = fn()
        res[name] = {"ok": repr(v)[:300]}
    except n.NVMLError as e:
        res[name] = {"error": str(e), "code": e.value}
    except Exception as e:  # an entry point this pynvml lacks
        res[name] = {"python": repr(e)[:200]}
probe("GetMigMode", lambda: n.nvmlDeviceGetMigMode(h))
def cost(fn, reps=1000):  # what gpuscope's once-a-second MIG check costs
    t0 = time.perf_counter_ns()
    for _ in range(reps):
        fn()
    return (time.perf_counter_ns() - t0) / reps
res["ns_per_call"] = {"GetMigMode": cost(lambda: n.nvmlDeviceGetMigMode(h)),
                      "GetMaxMigDeviceCount": cost(lambda: n.nvmlDeviceGetMaxMigDeviceCount(h))}
probe("GetMaxMigDeviceCount", lambda: n.nvmlDeviceGetMaxMigDeviceCount(h))
probe("GetMigDeviceHandleByIndex 0", lambda: n.nvmlDeviceGetMigDeviceHandleByIndex(h, 0))
probe("GetMigDeviceHandleByIndex 7", lambda: n.nvmlDeviceGetMigDeviceHandleByIndex(h, 7))
probe("GetGpuInstanceId", lambda: n.nvmlDeviceGetGpuInstanceId(h))
probe("GetComputeInstanceId", lambda: n.nvmlDeviceGetComputeInstanceId(h))
probe("IsMigDeviceHandle", lambda: n.nvmlDeviceIsMigDeviceHandle(h))
probe("GetDeviceHandleFromMigDeviceHandle", lambda: n.nvmlDeviceGetDeviceHandleFromMigDeviceHandle(h))
def attrs():
    a = n.nvmlDeviceGetAttributes(h)
    return {f: getattr(a, f) for f, _ in a._fields_}
probe("GetAttributes (v2)", attrs)
def gpm_mig(gi):
    s = n.nvmlGpmSampleAlloc()
    try:
        n.nvmlGpmMigSampleGet(h, gi, s)
        return "sample taken"
    finally:
        n.nvmlGpmSampleFree(s)
probe("GpmMigSampleGet gi 0", lambda: gpm_mig(0))
probe("GpmMigSampleGet gi 1", lambda: gpm_mig(1))
p = subprocess.Popen(["python3", f"{out}/loop.py"])
time.sleep(4)
def procs(fn):
    return [{k: getattr(x, k, None) for k in ("pid", "usedGpuMemory", "gpuInstanceId",
                                               "computeInstanceId")} for x in fn(h)]
probe("GetComputeRunningProcesses", lambda: procs(n.nvmlDeviceGetComputeRunningProcesses))
probe("GetGraphicsRunningProcesses", lambda: procs(n.nvmlDeviceGetGraphicsRunningProcesses))
p.wait()
print(json.dumps(res, indent=1))
PY
# (2) gpuscope's health thread on the real driver.
"$g" devices --json >"$out/devices.json" 2>"$out/devices.err"
"$g" devices >"$out/devices.txt" 2>&1
"$g" serve --listen 127.0.0.1:19401 -i 500 --health-interval 1 >"$out/serve.err" 2>&1 &
s1=$!
"$g" serve --listen 127.0.0.1:19402 -i 500 --health-interval 1 --naming dcgm >"$out/serve-dcgm.err" 2>&1 &
s2=$!
"$g" profile -s 100 --health-interval 1 -o "$out/health.db" -f -- python3 "$out/loop.py" \
  >"$out/profile.out" 2>"$out/profile.err"
echo "profile rc=$?" >>"$out/profile.err"
curl -s 127.0.0.1:19401/metrics >"$out/serve-metrics.txt"
curl -s 127.0.0.1:19402/metrics >"$out/serve-dcgm-metrics.txt"
"$g" monitor --json --once >"$out/monitor.json" 2>"$out/monitor.err"
kill $s1 $s2; wait $s1 $s2 2>/dev/null
"$g" analyze "$out/health.db" --json >"$out/analyze.json" 2>"$out/analyze.err"
"$g" analyze "$out/health.db" >"$out/analyze.txt" 2>&1
python3 - "$out" >"$out/health-rows.txt" 2>&1 <<'PY'
import sqlite3, sys
db = sqlite3.connect(f"{sys.argv[1]}/health.db")
cols = [r[1] for r in db.execute("PRAGMA table_info(health_samples)")]
rows = db.execute("SELECT * FROM health_samples ORDER BY 1").fetchall()
print("health rows", len(rows))
print("columns", cols)
for c in cols:
    vals = [r[cols.index(c)] for r in rows]
    nn = [v for v in vals if v is not None]
    print(f"{c:36} non-null {len(nn):3}/{len(vals)}  first {nn[0] if nn else None}  last {nn[-1] if nn else None}")
print("events", db.execute("SELECT kind, count(*) FROM events GROUP BY kind").fetchall())
PY
grep -E "^(gpuscope_gpu_|DCGM_FI_DEV_(XID|ECC|PCIE_REPLAY|ROW|RETIRED|NVLINK|ENC|DEC|.*VIOLATION))" \
  "$out/serve-metrics.txt" "$out/serve-dcgm-metrics.txt" | head -80 >"$out/serve-health.txt"
# (3) the cost of the health reads on the real driver.
GPUSCOPE_NVML_LIBRARY=libnvidia-ml.so.1 timeout 120 "$bundle/bin/bench_sampler" \
  --benchmark_filter='BM_HealthRead' --benchmark_min_time=0.5 >"$out/bench-health.txt" 2>&1
head -c 4000 "$out/mig-probe.txt"; cat "$out/health-rows.txt" "$out/profile.err" | head -60
head -40 "$out/serve-health.txt"; tail -5 "$out/bench-health.txt"; cat "$out/devices.txt" | head -40

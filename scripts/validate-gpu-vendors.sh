#!/usr/bin/env bash
# On a real NVIDIA GPU (docs/validation.md): the two-vendor code of the AMD work on a node without
# AMD GPUs. (1) `devices` plain and with Debian's ROCm SMI named (the "no AMD GPU" path of a real
# AMD library on a real NVIDIA node: silent beside the NVIDIA GPUs, the error with --vendor amd);
# (2) `profile` of a bf16 loop with ROCm SMI named: the devices' vendor columns, the samples, the
# energy counter against the integrated power, `analyze --json`'s vendor; (3) `serve`'s info
# family; (4) the NVIDIA reader behind the GpuReader interface against the raw calls.
# Read-only for the GPU. Usage: scripts/validate-gpu-vendors.sh BUNDLE OUT_DIR, where BUNDLE comes
# from scripts/gpu-bundle.sh with Debian's librocm_smi64.so.1 copied into BUNDLE/lib.
set -uo pipefail
bundle=$1
out=$2
mkdir -p "$out"
g=$bundle/bin/gpuscope
rocm=$bundle/lib/librocm_smi64.so.1
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
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,mig.mode.current --format=csv;
  ls -d /sys/module/amdgpu /sys/class/kfd /dev/kfd 2>&1; } >"$out/gpu.txt" 2>&1
# (1) devices, with and without a real AMD library.
{ time "$g" devices >"$out/devices.txt" 2>"$out/devices.err"; } 2>"$out/devices.time"
"$g" devices --json >"$out/devices.json" 2>>"$out/devices.err"
{ time GPUSCOPE_ROCM_SMI_LIBRARY=$rocm "$g" devices >"$out/devices-rocm.txt" 2>"$out/devices-rocm.err"; } 2>"$out/devices-rocm.time"
GPUSCOPE_ROCM_SMI_LIBRARY=$rocm "$g" devices --json >"$out/devices-rocm.json" 2>>"$out/devices-rocm.err"
GPUSCOPE_ROCM_SMI_LIBRARY=$rocm "$g" devices --vendor amd >"$out/devices-amd.txt" 2>"$out/devices-amd.err"
echo "rc=$?" >>"$out/devices-amd.err"
# (2) profile with the AMD library named, then what was stored.
GPUSCOPE_ROCM_SMI_LIBRARY=$rocm "$g" profile -s 100 --power-sampling-ms 50 -o "$out/run.db" -f \
  -- python3 "$out/loop.py" >"$out/profile.out" 2>"$out/profile.err"
echo "profile rc=$?" >>"$out/profile.err"
"$g" analyze "$out/run.db" --json >"$out/analyze.json" 2>"$out/analyze.err"
"$g" analyze "$out/run.db" >"$out/analyze.txt" 2>&1
python3 - "$out" >"$out/stored.txt" 2>&1 <<'PY'
import json, sqlite3, sys
o = sys.argv[1]
db = sqlite3.connect(f"{o}/run.db")
print("schema", db.execute("SELECT value FROM meta WHERE key LIKE 'schema%'").fetchall())
print("devices", db.execute("SELECT device_index, vendor, vendor_index, name FROM devices").fetchall())
print("samples", db.execute("SELECT count(*), count(energy_mj), count(sm_active_pct), count(power_w) FROM samples").fetchall())
e = db.execute("SELECT min(energy_mj), max(energy_mj), min(mono_ns), max(mono_ns) FROM samples WHERE energy_mj IS NOT NULL").fetchone()
p = db.execute("SELECT mono_ns, power_w FROM power_samples WHERE power_w IS NOT NULL AND mono_ns BETWEEN ? AND ? ORDER BY mono_ns", (e[2], e[3])).fetchall()
integ = sum((b[0]-a[0])/1e9*(a[1]+b[1])/2 for a, b in zip(p, p[1:]))
counter = (e[1]-e[0])/1e3
print(f"counter {counter:.1f} J  integrated power {integ:.1f} J  ({(integ/counter-1)*100:+.2f} %) over {(e[3]-e[2])/1e9:.2f} s, {len(p)} power samples")
print("back steps", db.execute("SELECT count(*) FROM (SELECT energy_mj - lag(energy_mj) OVER (ORDER BY mono_ns) d FROM samples) WHERE d < 0").fetchone())
print("events", db.execute("SELECT kind, count(*) FROM events GROUP BY kind").fetchall())
a = json.load(open(f"{o}/analyze.json"))
for gpu in a.get("gpus", []):
    print("analysis gpu", {k: gpu.get(k) for k in ("index", "vendor", "name", "energy_j", "score")})
PY
# (3) serve with the AMD library named.
GPUSCOPE_ROCM_SMI_LIBRARY=$rocm "$g" serve --listen 127.0.0.1:19403 -i 500 >"$out/serve.err" 2>&1 &
s=$!
sleep 4
curl -s 127.0.0.1:19403/metrics >"$out/serve-metrics.txt"
kill $s; wait $s 2>/dev/null
# (4) the reader through the interface against the raw calls, on the real driver.
GPUSCOPE_NVML_LIBRARY=libnvidia-ml.so.1 timeout 150 "$bundle/bin/bench_sampler" \
  --benchmark_filter='BM_RawNvmlCalls|BM_DeviceReaderRead' --benchmark_min_time=1 \
  >"$out/bench.txt" 2>&1
cat "$out/gpu.txt" "$out/devices.time" "$out/devices-rocm.time"; cat "$out/devices-rocm.err"
diff "$out/devices.txt" "$out/devices-rocm.txt" && echo "devices: same text with ROCm SMI named"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('notes', d.get('notes'), 'amd', d.get('amd'))" "$out/devices-rocm.json"
cat "$out/devices-amd.err" "$out/profile.err" "$out/stored.txt"
grep -E "^gpuscope_gpu_info" "$out/serve-metrics.txt"; cat "$out/serve.err" | head -5
tail -6 "$out/bench.txt"; head -30 "$out/analyze.txt"

#!/usr/bin/env bash
# Collects what docs/validation.md compares, on a machine with an NVIDIA GPU. Read-only: changes
# no GPU setting. Usage: scripts/validate-gpu.sh BUILD_DIR OUT_DIR
set -uo pipefail
build=${1:-build}
out=${2:-validation-out}
mkdir -p "$out"
gpuscope="$build/bin/gpuscope"

"$gpuscope" --version > "$out/version.txt" 2>&1
"$gpuscope" devices --json > "$out/devices.json" 2> "$out/devices.err"
"$gpuscope" devices > "$out/devices.txt" 2>&1
nvidia-smi -q -x > "$out/nvidia-smi.xml" 2>&1
nvidia-smi -q > "$out/nvidia-smi.txt" 2>&1

python3 - > "$out/pynvml.json" 2> "$out/pynvml.err" <<'PY'
import json, pynvml as n
n.nvmlInit()
out = {"driver": n.nvmlSystemGetDriverVersion(), "devices": []}
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    def get(f, *a):
        try:
            v = f(h, *a)
            return v.decode() if isinstance(v, bytes) else v
        except Exception as e:  # record what the driver said, not a guess
            return "error: %s" % e
    mem = get(n.nvmlDeviceGetMemoryInfo)
    out["devices"].append({
        "name": get(n.nvmlDeviceGetName), "uuid": get(n.nvmlDeviceGetUUID),
        "pci_bus_id": get(lambda h: n.nvmlDeviceGetPciInfo(h).busId),
        "architecture": get(n.nvmlDeviceGetArchitecture),
        "memory_total": getattr(mem, "total", mem),
        "power_limit_mw": get(n.nvmlDeviceGetPowerManagementLimit),
        "enforced_limit_mw": get(n.nvmlDeviceGetEnforcedPowerLimit),
        "default_limit_mw": get(n.nvmlDeviceGetPowerManagementDefaultLimit),
        "constraints_mw": get(n.nvmlDeviceGetPowerManagementLimitConstraints),
        "max_sm_mhz": get(n.nvmlDeviceGetMaxClockInfo, 1),
        "max_mem_mhz": get(n.nvmlDeviceGetMaxClockInfo, 2),
        "power_mw": get(n.nvmlDeviceGetPowerUsage),
        "energy_mj": get(n.nvmlDeviceGetTotalEnergyConsumption),
    })
print(json.dumps(out, indent=2, default=str))
PY

cat > "$out/matmul.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
time.sleep(3)  # an idle lead-in, for trimming checks
end = time.time() + 20
n = 0
while time.time() < end:
    c = a @ b
    n += 1
torch.cuda.synchronize()
print(f"iterations {n} tflops {n * 2 * 8192**3 / 20 / 1e12:.1f}")
time.sleep(2)
PY
"$gpuscope" profile --capture-output --power-sampling-ms 10 -o "$out/run.db" -f -- python3 "$out/matmul.py" \
  > "$out/profile.out" 2> "$out/profile.err"
echo "profile exit: $?" >> "$out/profile.err"

if [ -x "$build/bench/bench_nvml_calls" ]; then
  GPUSCOPE_NVML_LIBRARY=libnvidia-ml.so.1 "$build/bench/bench_nvml_calls" > "$out/bench_nvml_calls.txt" 2>&1
fi
if [ -x "$build/bench/collect/bench_sampler" ]; then
  GPUSCOPE_NVML_LIBRARY=libnvidia-ml.so.1 "$build/bench/collect/bench_sampler" --benchmark_filter='Raw|Reader' \
    > "$out/bench_sampler.txt" 2>&1
fi
ls -la "$out"

#!/usr/bin/env bash
# Collects what docs/validation.md compares, on a machine with an NVIDIA GPU. Read-only: changes
# no GPU setting. Usage: scripts/validate-gpu.sh BUILD_DIR OUT_DIR
# BUILD_DIR is a build tree or a bundle made by scripts/gpu-bundle.sh (bench binaries in bin/).
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

bench() {  # bench NAME [ARGS...]: from a build tree (bench/) or a bundle (bin/)
  local name=$1; shift
  for b in "$build/bench/$name" "$build/bin/$name"; do
    if [ -x "$b" ]; then GPUSCOPE_NVML_LIBRARY=libnvidia-ml.so.1 "$b" "$@"; return; fi
  done
}

# The machine: what the whole job's energy (powercap) and the health checks can read here.
{
  uname -a; cat /etc/os-release 2>/dev/null | head -3; nproc; grep -m1 'model name' /proc/cpuinfo
  echo "--- powercap"; for z in /sys/class/powercap/*; do
    [ -e "$z/name" ] && echo "$z $(cat "$z/name") energy_uj=$(cat "$z/energy_uj" 2>&1) max=$(cat "$z/max_energy_range_uj" 2>&1)"
  done
  echo "--- hwmon"; for h in /sys/class/hwmon/*; do echo "$h $(cat "$h/name" 2>&1)"; done
  echo "--- /dev/nvidia*"; ls -l /dev/nvidia* 2>&1
  echo "--- dcgm"; ls /usr/lib/x86_64-linux-gnu/libdcgm.so* 2>&1; command -v dcgmi nv-hostengine 2>&1
  echo "--- cupti"; find / -name 'libcupti.so*' -not -path '/proc/*' 2>/dev/null | head
} > "$out/machine.txt" 2>&1

# Health, MIG and every NVML field id, as the driver answers them (pynvml).
python3 - > "$out/health.json" 2> "$out/health.err" <<'PY'
import json, pynvml as n
n.nvmlInit()
def get(f, *a):
    try:
        v = f(*a)
        return v.decode() if isinstance(v, bytes) else v
    except Exception as e:
        return "error: %s" % e
def struct(v):
    if isinstance(v, (int, float, str, type(None))): return v
    if isinstance(v, (list, tuple)): return [struct(x) for x in v]
    if hasattr(v, "_fields_"): return {f[0]: struct(getattr(v, f[0])) for f in v._fields_}
    return str(v)
out = []
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    d = {"index": i}
    d["ecc_mode"] = get(n.nvmlDeviceGetEccMode, h)
    for et, en in ((0, "corrected"), (1, "uncorrected")):
        for ct, cn in ((0, "volatile"), (1, "aggregate")):
            d[f"ecc_{en}_{cn}"] = get(n.nvmlDeviceGetTotalEccErrors, h, et, ct)
            for loc in range(0, 9):
                d[f"ecc_{en}_{cn}_loc{loc}"] = get(n.nvmlDeviceGetMemoryErrorCounter, h, et, ct, loc)
    d["retired_pages_sbe"] = get(n.nvmlDeviceGetRetiredPages, h, 0)
    d["retired_pages_dbe"] = get(n.nvmlDeviceGetRetiredPages, h, 1)
    d["retired_pending"] = get(n.nvmlDeviceGetRetiredPagesPendingStatus, h)
    d["remapped_rows"] = get(n.nvmlDeviceGetRemappedRows, h)
    d["row_remapper_histogram"] = struct(get(n.nvmlDeviceGetRowRemapperHistogram, h))
    d["pcie_replay"] = get(n.nvmlDeviceGetPcieReplayCounter, h)
    d["pcie_gen"] = [get(n.nvmlDeviceGetCurrPcieLinkGeneration, h), get(n.nvmlDeviceGetMaxPcieLinkGeneration, h)]
    d["pcie_width"] = [get(n.nvmlDeviceGetCurrPcieLinkWidth, h), get(n.nvmlDeviceGetMaxPcieLinkWidth, h)]
    d["clocks_event_reasons"] = get(n.nvmlDeviceGetCurrentClocksEventReasons, h)
    d["supported_events"] = get(n.nvmlDeviceGetSupportedEventTypes, h)
    links = {}
    for l in range(18):
        st = get(n.nvmlDeviceGetNvLinkState, h, l)
        if isinstance(st, str): links[l] = st; continue
        links[l] = {"state": st, "version": get(n.nvmlDeviceGetNvLinkVersion, h, l),
                    "errors": [get(n.nvmlDeviceGetNvLinkErrorCounter, h, l, c) for c in range(5)]}
    d["nvlink"] = links
    d["mig_mode"] = get(n.nvmlDeviceGetMigMode, h)
    d["max_mig_devices"] = get(n.nvmlDeviceGetMaxMigDeviceCount, h)
    d["gpu_instance_profiles"] = {p: struct(get(n.nvmlDeviceGetGpuInstanceProfileInfo, h, p)) for p in range(0, 15)}
    fields = {}
    for fid in range(1, 300):
        try:
            v = n.nvmlDeviceGetFieldValues(h, [fid])[0]
            if v.nvmlReturn == 0:
                vt = v.valueType
                val = [v.value.dVal, v.value.uiVal, v.value.ulVal, v.value.ullVal, v.value.sllVal][vt] if vt < 5 else None
                fields[fid] = {"type": vt, "value": val, "latency_us": v.latencyUsec}
            else:
                fields[fid] = "ret %d" % v.nvmlReturn
        except Exception as e:
            fields[fid] = "error: %s" % e
    d["fields"] = fields
    try:  # an Xid event set, as the exporter will hold one: what registering says, one short wait
        es = n.nvmlEventSetCreate()
        n.nvmlDeviceRegisterEvents(h, n.nvmlEventTypeXidCriticalError, es)
        d["xid_register"] = "ok"
        d["xid_wait_100ms"] = struct(get(n.nvmlEventSetWait_v2, es, 100))
        n.nvmlEventSetFree(es)
    except Exception as e:
        d["xid_register"] = "error: %s" % e
    out.append(d)
print(json.dumps(out, indent=1, default=str))
PY

# nvidia-smi's own formats, for the log readers: the field list this driver knows.
nvidia-smi --help-query-gpu > "$out/smi-help-query-gpu.txt" 2>&1
nvidia-smi dmon -h > "$out/smi-dmon-help.txt" 2>&1
nvidia-smi mig -lgip > "$out/smi-mig-lgip.txt" 2>&1

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
q=timestamp,index,name,uuid,pci.bus_id,driver_version,pstate,temperature.gpu,temperature.memory
q=$q,utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,power.draw
q=$q,power.draw.average,power.draw.instant,power.limit,enforced.power.limit,clocks.sm,clocks.mem
q=$q,clocks.gr,clocks_event_reasons.active,fan.speed,ecc.errors.corrected.volatile.total
q=$q,pcie.link.gen.current,pcie.link.width.current,mig.mode.current
nvidia-smi --query-gpu=$q --format=csv -lms 500 > "$out/smi.csv" 2>&1 & p1=$!
nvidia-smi --query-gpu=$q --format=csv,noheader,nounits -l 1 > "$out/smi-nounits.csv" 2>&1 & p2=$!
nvidia-smi dmon -s pucvmet -o DT > "$out/smi-dmon.txt" 2>&1 & p3=$!
nvidia-smi dmon -s pucvmet --format csv > "$out/smi-dmon.csv" 2>&1 & p4=$!
nvidia-smi dmon --gpm-metrics 1,2,3,4,5,10,11,12,13 -d 1 > "$out/smi-dmon-gpm.txt" 2>&1 & p5=$!
p6=
if command -v dcgmi >/dev/null; then
  dcgmi dmon -e 100,101,140,150,155,156,203,204,1001,1002,1004,1005 -d 500 > "$out/dcgmi-dmon.txt" 2>&1 & p6=$!
fi
"$gpuscope" serve --listen 127.0.0.1:19400 -i 500 > "$out/serve.err" 2>&1 & ps=$!
(sleep 12; curl -s 127.0.0.1:19400/metrics > "$out/serve-metrics.txt"; nvidia-smi pmon -c 2 > "$out/smi-pmon.txt" 2>&1) &
"$gpuscope" profile --capture-output --power-sampling-ms 10 -o "$out/run.db" -f -- python3 "$out/matmul.py" \
  > "$out/profile.out" 2> "$out/profile.err"
echo "profile exit: $?" >> "$out/profile.err"
kill $p1 $p2 $p3 $p4 $p5 $p6 $ps 2>/dev/null; wait 2>/dev/null
"$gpuscope" analyze "$out/run.db" > "$out/analyze.txt" 2>&1
"$gpuscope" analyze "$out/run.db" --json > "$out/analyze.json" 2>&1
"$gpuscope" report "$out/run.db" -o "$out/report.html" > "$out/report.err" 2>&1

# Kernels and NVTX phases around a few training steps (docs/kernels.md, docs/phases.md).
cat > "$out/train.py" <<'PY'
import json, sys, time, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096)).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
x = torch.randn(2048, 4096, device="cuda")
def steps(k):
    for _ in range(k):
        torch.cuda.nvtx.range_push("step")
        torch.cuda.nvtx.range_push("forward"); loss = m(x).square().mean(); torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("backward"); opt.zero_grad(); loss.backward(); torch.cuda.nvtx.range_pop()
        opt.step(); torch.cuda.synchronize(); torch.cuda.nvtx.range_pop()
steps(3)
t = time.time(); steps(20); print(f"20 steps {time.time() - t:.4f} s")
if "--profiler" in sys.argv:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        steps(20)
    rows = [{"name": e.key, "count": e.count, "device_us": e.device_time_total} for e in p.key_averages()]
    json.dump(rows, open(sys.argv[-1], "w"), indent=1)
PY
python3 "$out/train.py" > "$out/train-plain.out" 2>&1
python3 "$out/train.py" --profiler "$out/torch-profiler.json" > "$out/train-profiler.out" 2>&1
"$gpuscope" profile --trace-kernels -o "$out/kernels.db" -f -- python3 "$out/train.py" \
  > "$out/train-traced.out" 2> "$out/train-traced.err"
"$gpuscope" kernels "$out/kernels.db" --json > "$out/kernels.json" 2> "$out/kernels.err"
"$gpuscope" profile --trace-nvtx -o "$out/nvtx.db" -f -- python3 "$out/train.py" \
  > "$out/train-nvtx.out" 2> "$out/train-nvtx.err"
"$gpuscope" analyze "$out/nvtx.db" > "$out/nvtx-analyze.txt" 2>&1

bench bench_nvml_calls > "$out/bench_nvml_calls.txt" 2>&1
bench bench_sampler --benchmark_filter='Raw|Reader' --benchmark_min_time=0.2 > "$out/bench_sampler.txt" 2>&1
# The sampler against the real driver's costs (docs/performance.md, "Real driver costs"): every
# GPU of the node at 100 ms with power at 10 ms and without, missed ticks, the spread of a tick's
# rows, the counter's readings per second, CPU.
# With the counter every second (--energy-counter-ms 1000) as well: the CPU the counter costs.
bench bench_sampler --benchmark_filter='RealCosts8Gpus/(10|0)/0/(0|1000)/' \
  > "$out/bench_sampler_costs.txt" 2>&1
# Each call the sampler makes, alone and grouped as it groups them: wall and CPU time (does the
# driver spin?), and how often each power reading's value changes when read every millisecond.
python3 "$(dirname "$0")/nvml-call-costs.py" 0.3 > "$out/nvml-call-costs.json" 2>&1
# The same loop profiled with the counter at every sample and every second: the energy of both.
for c in 0 1000; do
  "$gpuscope" profile -s 100 --power-sampling-ms 20 --energy-counter-ms $c -o "$out/counter$c.db" \
    -f -- python3 "$out/matmul.py" > /dev/null 2> "$out/counter$c.err"
  "$gpuscope" analyze "$out/counter$c.db" > "$out/counter$c-analyze.txt" 2>&1
done
# Does the driver make one GPU's slow calls take turns (the simulator's "waits": "gpu")? Two
# threads each read GPU 0's energy counter 40 times, against one thread reading it 80 times.
python3 - > "$out/energy-call-turns.json" 2>&1 <<'PY'
import json, threading, time, pynvml
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
def reads(n):
    for _ in range(n):
        pynvml.nvmlDeviceGetTotalEnergyConsumption(h)
t = time.perf_counter(); reads(80); one = time.perf_counter() - t
threads = [threading.Thread(target=reads, args=(40,)) for _ in range(2)]
t = time.perf_counter()
for th in threads: th.start()
for th in threads: th.join()
two = time.perf_counter() - t
print(json.dumps({"one_thread_80_reads_s": one, "two_threads_40_reads_each_s": two,
                  "per_read_ms": 1000 * one / 80, "overlap": one / two}, indent=1))
PY
# Real torch.profiler (Kineto) traces for the PyTorch trace reader (docs/kernels.md): CPU and CUDA
# activities over a few profiler steps with annotations, an NCCL all-reduce (world size 1) on the
# process group's own stream overlapping a GEMM, a host-to-device copy, a memset and an idle gap;
# written by tensorboard_trace_handler (gzipped) and by export_chrome_trace (plain).
# The script is kept beside the traces it made (tests/fixtures/kineto/h200/).
cp "$(dirname "$0")/../tests/fixtures/kineto/h200/torch_trace.py" "$out/torch_trace.py"
mkdir -p "$out/torch-traces"
python3 "$out/torch_trace.py" "$out/torch-traces" > "$out/torch-trace.out" 2>&1
ls -la "$out"

#!/usr/bin/env bash
# GPU health signals on a real GPU, for the health work (docs/validation.md): NVML's
# event API (what a wait costs, which events a power-capped load raises and when), the violation
# (throttle) time fields against the clock-event reasons gpuscope samples, and the cost of each
# health query. Read-only for the GPU: nothing is set, no fault is injected.
# Usage: scripts/validate-gpu-health.sh BUNDLE OUT_DIR   (BUNDLE from scripts/gpu-bundle.sh)
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
time.sleep(3)
end = time.time() + 10
while time.time() < end:
    c = a @ b
torch.cuda.synchronize()
time.sleep(3)
PY
python3 - "$out" "$g" <<'PY'
import json, subprocess, sys, threading, time
import pynvml as n
out, g = sys.argv[1], sys.argv[2]
n.nvmlInit()
h = n.nvmlDeviceGetHandleByIndex(0)
res = {"driver": n.nvmlSystemGetDriverVersion(), "name": n.nvmlDeviceGetName(h)}

def timed(name, fn, reps=200):
    try:
        fn()
    except n.NVMLError as e:
        res.setdefault("calls", {})[name] = {"error": str(e)}
        return
    t0 = time.perf_counter_ns()
    for _ in range(reps):
        v = fn()
    res.setdefault("calls", {})[name] = {"ns_per_call": (time.perf_counter_ns() - t0) / reps,
                                         "value": repr(v)[:200]}

C, U = n.NVML_MEMORY_ERROR_TYPE_CORRECTED, n.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
V, A = n.NVML_VOLATILE_ECC, n.NVML_AGGREGATE_ECC
timed("EccMode", lambda: n.nvmlDeviceGetEccMode(h))
timed("TotalEcc corrected volatile", lambda: n.nvmlDeviceGetTotalEccErrors(h, C, V))
timed("TotalEcc uncorrected aggregate", lambda: n.nvmlDeviceGetTotalEccErrors(h, U, A))
timed("RemappedRows", lambda: n.nvmlDeviceGetRemappedRows(h))
timed("PcieReplayCounter", lambda: n.nvmlDeviceGetPcieReplayCounter(h))
timed("EncoderUtilization", lambda: n.nvmlDeviceGetEncoderUtilization(h))
timed("DecoderUtilization", lambda: n.nvmlDeviceGetDecoderUtilization(h))
timed("RetiredPages sbe", lambda: n.nvmlDeviceGetRetiredPages(h, n.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS))
timed("SupportedEventTypes", lambda: n.nvmlDeviceGetSupportedEventTypes(h))
VIOLATION = list(range(74, 82)) + [269, 270, 271]
def fields(ids):
    return {i: (v.nvmlReturn, v.value.ullVal, v.timestamp) for i, v in
            zip(ids, n.nvmlDeviceGetFieldValues(h, ids))}
timed("FieldValues violation 74-81,269-271", lambda: fields(VIOLATION))

# The event set: what a wait costs with nothing pending (timeout 0 and 1 ms).
es = n.nvmlEventSetCreate()
supported = n.nvmlDeviceGetSupportedEventTypes(h)
res["supported_event_types"] = hex(supported)
n.nvmlDeviceRegisterEvents(h, supported, es)
def wait(ms):
    try:
        d = n.nvmlEventSetWait_v2(es, ms)
        return ("event", hex(d.eventType), d.eventData)
    except n.NVMLError as e:
        return ("error", str(e))
for ms in (0, 1):
    t0 = time.perf_counter_ns()
    r = [wait(ms) for _ in range(100)]
    res[f"wait_{ms}ms"] = {"ns_per_call": (time.perf_counter_ns() - t0) / 100, "first": r[0],
                           "events": [x for x in r if x[0] == "event"][:5]}

# During a power-capped load: events as they come (a waiting thread, 100 ms waits), the violation
# fields before and after, and gpuscope profile beside it for the clock-event reasons.
events, stop = [], False
def watcher():
    while not stop:
        w = wait(100)
        if w[0] == "event":
            events.append((time.time(),) + w)
th = threading.Thread(target=watcher); th.start()
before, t_before = fields(VIOLATION), time.time_ns()
p = subprocess.run([g, "profile", "-s", "100", "-o", f"{out}/profile.db", "-f", "--", "python3",
                    f"{out}/loop.py"], capture_output=True, text=True)
after, t_after = fields(VIOLATION), time.time_ns()
stop = True; th.join()
res["profile_rc"] = p.returncode
res["events_during_load"] = {"count": len(events), "first": events[:10],
                             "types": sorted({e[2] for e in events})}
res["violation_fields"] = {str(i): {"before": before[i], "after": after[i],
                                    "delta_ns": after[i][1] - before[i][1]} for i in VIOLATION}
res["window_ns"] = t_after - t_before
n.nvmlEventSetFree(es)
json.dump(res, open(f"{out}/health-events.json", "w"), indent=1, default=str)
print(json.dumps(res, indent=1, default=str)[:6000])
PY
"$g" analyze "$out/profile.db" -d none --json >"$out/profile.json" 2>/dev/null
python3 - "$out" <<'PY'
import json, sys
p = json.load(open(f"{sys.argv[1]}/profile.json"))
g = p["gpus"][0]
print("profile duration", p["duration_s"], "throttle_s", g["throttle_s"])
PY

#!/usr/bin/env bash
# gpuscope job --pod against a real VictoriaMetrics (docs/jobs.md): kube-state-metrics' series of
# pods (as it exports them: start and completion times with the pod's uid, kube_pod_info with its
# node) and GPU series of gpuscope serve and of dcgm-exporter, pushed with known values some hours
# in the past (and, for a running pod, up to now); each pod's analysis must have its window, its
# node, its GPUs and the exact means and energy that were pushed.
#   pod_job_test.sh GPUSCOPE [SOURCE-DIR]     (exit 77: victoria-metrics or python3 is missing)
set -uo pipefail
gpuscope=$(realpath "$1")
for tool in victoria-metrics python3 curl; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is missing"; exit 77; }
done

work=$(mktemp -d)
vm_pid=
cleanup() {
  [ -n "$vm_pid" ] && kill "$vm_pid" 2>/dev/null && wait "$vm_pid" 2>/dev/null
  if [ -n "${GPUSCOPE_KEEP:-}" ]; then mkdir -p "$GPUSCOPE_KEEP" && cp -r "$work"/. "$GPUSCOPE_KEEP/"; fi
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
check() {  # check WHAT EXPECTED GOT
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAIL: $1: expected '$2', got '$3'"; failures=$((failures + 1)); fi
}

source "$(dirname "${BASH_SOURCE[0]}")/../support/ports.sh"  # free_port
port=$(free_port)
victoria-metrics -httpListenAddr="127.0.0.1:$port" -storageDataPath="$work/vm" -retentionPeriod=100y \
  -search.latencyOffset=0s -search.disableCache -loggerLevel=ERROR >"$work/vm.log" 2>&1 &
vm_pid=$!
url=http://127.0.0.1:$port
for _ in $(seq 100); do
  curl -fs "$url/health" >/dev/null 2>&1 && break
  kill -0 "$vm_pid" 2>/dev/null || { echo "FAIL: victoria-metrics exited"; cat "$work/vm.log"; exit 1; }
  sleep 0.1
done
curl -fs "$url/health" >/dev/null || { echo "FAIL: victoria-metrics does not answer"; exit 1; }

# The samples, and what gpuscope must make of them (expected.json), from one script.
now=$(date +%s)
python3 - "$work" "$now" <<'PY'
import json, sys
work, now = sys.argv[1], int(sys.argv[2])
lines, expected = [], {}
def put(name, labels, value, t_s):
    body = ",".join(f'{k}="{v}"' for k, v in labels.items())
    lines.append(f"{name}{{{body}}} {value!r} {int(round(t_s * 1000))}")

ksm = {"job": "kube-state-metrics", "instance": "10.42.0.7:8080"}
def kube_pod(ns, pod, uid, node, start, end, seen_until):
    """kube-state-metrics' series of one pod, scraped every 30 s from its creation until it is
    gone (seen_until); the completion time only once it completed."""
    ident = {"namespace": ns, "pod": pod, "uid": uid}
    info = {**ident, "host_ip": "10.0.1.5", "pod_ip": "10.42.3.9", "node": node,
            "created_by_kind": "StatefulSet", "created_by_name": pod.rsplit("-", 1)[0],
            "priority_class": "", "host_network": "false"}
    t = start - 30
    while t <= seen_until:
        put("kube_pod_info", {**ksm, **info}, 1, t)
        put("kube_pod_created", {**ksm, **ident}, start - 30, t)
        if t >= start:
            put("kube_pod_start_time", {**ksm, **ident}, start, t)
        phase = "Pending" if t < start else ("Running" if end is None or t < end else "Succeeded")
        for p in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            put("kube_pod_status_phase", {**ksm, **ident, "phase": p}, int(p == phase), t)
        if end is not None and t >= end:
            put("kube_pod_completion_time", {**ksm, **ident}, end, t)
        t += 30

def gpus(family, ns, pod, node, start, end, count, uuid_base, first, last):
    """count GPUs' samples every 15 s from first to last; labelled with the pod while it ran.
    Returns, per UUID, the means and the energy (J) of the samples inside [start, end]."""
    out = {}
    for i in range(count):
        uuid = f"GPU-{uuid_base}-{i:04d}-4000-8000-00000000000{i}"
        energy = 1.0e6 * (i + 1)  # J
        inside = {"power": [], "sm": [], "util": [], "energy": []}
        t, k = first, 0
        while t <= last:
            power = 150.0 + 40.0 * i + 12.5 * (k % 4)
            sm = round(0.25 + 0.2 * i + 0.05 * (k % 3), 4)
            util = round(0.6 + 0.1 * i + 0.1 * (k % 2), 4)
            if k > 0: energy += power * 15
            ran = start <= t <= end
            if family == "gpuscope":
                labels = {"job": "gpuscope", "instance": f"{node}:9400", "gpu": str(i), "uuid": uuid,
                          "hostname": node}
                if ran: labels.update({"pod": pod, "namespace": ns, "container": "trainer"})
                put("gpuscope_power_watts", labels, power, t)
                put("gpuscope_energy_joules_total", labels, energy, t)
                put("gpuscope_sm_active_ratio", labels, sm, t)
                put("gpuscope_gpu_util_ratio", labels, util, t)
                put("gpuscope_temperature_celsius", labels, 60 + i, t)
                info = {"job": "gpuscope", "instance": f"{node}:9400", "gpu": str(i), "uuid": uuid,
                        "hostname": node, "name": "NVIDIA H100 80GB HBM3",
                        "pci_bus_id": f"00000000:{0x18 + i:02X}:00.0"}
                put("gpuscope_gpu_info", info, 1, t)
            else:
                # dcgm-exporter scraped with honor_labels false: its pod, namespace and container
                # labels clash with the target's and become exported_*.
                labels = {"job": "gpu-metrics", "instance": "10.42.5.2:9400",
                          "pod": "nvidia-dcgm-exporter-x7k2p", "namespace": "gpu-operator",
                          "container": "nvidia-dcgm-exporter", "gpu": str(i), "UUID": uuid,
                          "device": f"nvidia{i}", "modelName": "NVIDIA A100-SXM4-80GB",
                          "pci_bus_id": f"00000000:{0x07 + i:02X}:00.0", "Hostname": node,
                          "DCGM_FI_DRIVER_VERSION": "550.54.15"}
                if ran:
                    labels.update({"exported_pod": pod, "exported_namespace": ns,
                                   "exported_container": "infer"})
                put("DCGM_FI_PROF_SM_ACTIVE", labels, sm, t)
                put("DCGM_FI_DEV_POWER_USAGE", labels, power, t)
                put("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", labels, round(energy * 1000), t)
                put("DCGM_FI_DEV_GPU_UTIL", labels, round(util * 100), t)
            if ran:
                inside["power"].append(power); inside["sm"].append(sm)
                inside["util"].append(util); inside["energy"].append(energy)
            t += 15; k += 1
        mean = lambda v: sum(v) / len(v)
        out[uuid] = {"index": i, "host": node, "peak_power_w": max(inside["power"]),
                     "model": "NVIDIA H100 80GB HBM3" if family == "gpuscope" else "NVIDIA A100-SXM4-80GB",
                     "sm_active": mean(inside["sm"]), "gpu_util": mean(inside["util"]),
                     "energy_j": inside["energy"][-1] - inside["energy"][0],
                     "samples": len(inside["power"])}
    return out

# ml/train-0: finished some hours ago on gpu-node-1 after 600 s, with 2 GPUs (gpuscope serve).
# An earlier pod of the same name (a StatefulSet's, another uid) ran on gpu-node-2 an hour before.
t0 = (now - 5 * 3600) // 15 * 15
kube_pod("ml", "train-0", "0b1e7c52-3f4a-4c1d-9a57-1f2e3d4c5b6a", "gpu-node-2", t0 - 3600, t0 - 3000, t0 - 2940)
kube_pod("ml", "train-0", "5d9b8a41-77c2-4e0f-b6d3-a1b2c3d4e5f6", "gpu-node-1", t0, t0 + 600, t0 + 660)
expected["train"] = {"start": t0, "end": t0 + 600, "node": "gpu-node-1",
                     "gpus": gpus("gpuscope", "ml", "train-0", "gpu-node-1", t0, t0 + 600, 2, "a1a1a1a1",
                                  t0 - 120, t0 + 720)}
gpus("gpuscope", "ml", "train-0", "gpu-node-2", t0 - 3600, t0 - 3000, 1, "b2b2b2b2", t0 - 3600, t0 - 3000)
# ml/infer-0: finished on gpu-node-3, one hour after train-0, with 2 GPUs (dcgm-exporter).
t1 = t0 + 3600
kube_pod("ml", "infer-0", "9e8d7c6b-5a49-4382-9170-abcdefabcdef", "gpu-node-3", t1, t1 + 600, t1 + 660)
expected["infer"] = {"start": t1, "end": t1 + 600, "node": "gpu-node-3",
                     "gpus": gpus("dcgm", "ml", "infer-0", "gpu-node-3", t1, t1 + 600, 2, "c3c3c3c3",
                                  t1 - 60, t1 + 720)}
# ml/serve-0: running on gpu-node-2 since 10 minutes ago; an earlier serve-0 completed before.
t2 = (now - 600) // 15 * 15
kube_pod("ml", "serve-0", "11111111-2222-4333-8444-555555555555", "gpu-node-4", t2 - 7200, t2 - 5400, t2 - 5340)
kube_pod("ml", "serve-0", "66666666-7777-4888-9999-000000000000", "gpu-node-2", t2, None, now - 1)
expected["serve"] = {"start": t2, "node": "gpu-node-2",
                     "gpus": gpus("gpuscope", "ml", "serve-0", "gpu-node-2", t2, now, 1, "d4d4d4d4",
                                  t2, now - 1)}
open(f"{work}/push.txt", "w").write("\n".join(lines) + "\n")
json.dump(expected, open(f"{work}/expected.json", "w"), indent=1)
print(f"pushing {len(lines)} samples")
PY
curl -fsS --data-binary "@$work/push.txt" "$url/api/v1/import/prometheus" || { echo "FAIL: the push"; exit 1; }
curl -fsS "$url/internal/force_flush" >/dev/null || true
sleep 1
for _ in $(seq 50); do  # until every pod's series can be read
  n=$(curl -fsS "$url/api/v1/query" --data-urlencode 'query=count(last_over_time(kube_pod_start_time[1d]))' |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
  [ "$n" = 5 ] && break
  sleep 0.2
done
check "pushed: five pods' start times" 5 "$n"

job() { "$gpuscope" job --prometheus "$url" "$@"; }

# The pods, analysed.
for pod in train infer serve; do
  job --pod "ml/$pod-0" --json >"$work/$pod.json" 2>"$work/$pod.err"
  check "ml/$pod-0: exit status" 0 "$?"
  cat "$work/$pod.err"
  python3 - "$work/expected.json" "$work/$pod.json" "$pod" "$(date +%s)" <<'PY' || failures=$((failures + 1))
import json, sys
expected, pod, now = json.load(open(sys.argv[1])), sys.argv[3], int(sys.argv[4])
try:
    got = json.load(open(sys.argv[2]))
except ValueError as e:
    print(f"FAIL: {pod}: no JSON ({e})"); sys.exit(1)
e = expected[pod]
bad = []
def close(what, want, have, rel=1e-6, absolute=1e-9):
    ok = have is not None and abs(have - want) <= max(absolute, rel * abs(want))
    print(f"{'ok' if ok else 'FAIL'}: {pod}: {what}: expected {want}, got {have}")
    if not ok: bad.append(what)
end = e.get("end", now)
close("duration_s", end - e["start"], got.get("duration_s"), rel=0, absolute=1.0 if "end" in e else 20.0)
gpus = {g["uuid"]: g for g in got.get("gpus", [])}
if sorted(gpus) != sorted(e["gpus"]):
    bad.append(f"GPUs: expected {sorted(e['gpus'])}, got {sorted(gpus)}")
    print(f"FAIL: {pod}: {bad[-1]}")
for uuid, want in e["gpus"].items():
    g = gpus.get(uuid)
    if g is None: continue
    if g.get("host") != want["host"]:
        bad.append(f"{uuid}: host {g.get('host')}"); print(f"FAIL: {pod}: host {g.get('host')} != {want['host']}")
    if g.get("index") != want["index"]:
        bad.append(f"{uuid}: index"); print(f"FAIL: {pod}: index {g.get('index')} != {want['index']}")
    if g.get("name") != want["model"]:
        bad.append(f"{uuid}: name"); print(f"FAIL: {pod}: name {g.get('name')} != {want['model']}")
    close(f"{uuid} samples", want["samples"], g.get("samples"), rel=0)
    close(f"{uuid} peak power W", want["peak_power_w"], g.get("peak_power_w"))
    if "end" in e:  # the mean power is the energy over the pod's window
        close(f"{uuid} mean power W", want["energy_j"] / (e["end"] - e["start"]), g.get("average_power_w"))
    close(f"{uuid} SM active", want["sm_active"], g.get("activity"))
    close(f"{uuid} energy J", want["energy_j"], (g.get("energy_j") or {}).get("counter"))
sys.exit(1 if bad else 0)
PY
done
grep -q 'gpu-node-1' "$work/train.err" && grep -q '2 GPUs on gpu-node-1 ' "$work/train.err"
check "ml/train-0: read from its node only" 0 "$?"
grep -q 'gpu-node-2' "$work/train.err"
check "ml/train-0: nothing said of the earlier train-0's node" 1 "$?"
grep -q 'still running' "$work/train.err"
check "ml/train-0: not said to be running" 1 "$?"
grep -q 'still running' "$work/serve.err"
check "ml/serve-0: said to be still running" 0 "$?"
grep -q 'on gpu-node-2 ' "$work/serve.err"
check "ml/serve-0: on the node of its running incarnation" 0 "$?"
grep -q 'exported_pod' "$work/infer.err"
check "ml/infer-0: found by dcgm-exporter's exported_pod" 0 "$?"

# A pod the server never saw.
job --pod ml/missing --json >"$work/missing.json" 2>"$work/missing.err"
status=$?
cat "$work/missing.err"
check "ml/missing: fails" 1 "$([ "$status" -ne 0 ] && echo 1 || echo 0)"
check "ml/missing: says which pod" 1 "$(grep -c 'no pod ml/missing' "$work/missing.err")"
check "ml/missing: no JSON" 0 "$(wc -c <"$work/missing.json")"

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"

#!/usr/bin/env bash
# The log readers on a real GPU (docs/validation.md, docs/logs.md): nvidia-smi logs of every kind
# written while `gpuscope profile` records a PyTorch loop (steady, then bursty, then idle), then
# each log read by gpuscope and its energy over the profile's window compared with the energy
# counter the profile read. The loggers are killed as a job would kill them (cut-off last lines
# included). Read-only for the GPU.
# Usage: scripts/validate-gpu-logs.sh BUNDLE OUT_DIR   (BUNDLE from scripts/gpu-bundle.sh)
set -uo pipefail
bundle=$1
out=$2
mkdir -p "$out"
g=$bundle/bin/gpuscope
full=timestamp,index,uuid,name,pci.bus_id,driver_version,power.draw,power.draw.average,power.draw.instant,power.limit,enforced.power.limit,utilization.gpu,utilization.memory,memory.used,memory.free,memory.total,temperature.gpu,temperature.memory,clocks.sm,clocks.mem,clocks.gr,clocks_event_reasons.active,clocks_event_reasons.sw_power_cap,pstate,fan.speed
nvidia-smi --query-gpu=$full --format=csv -lms 100 -f "$out/smi-100ms.csv" &
p1=$!
nvidia-smi --query-gpu=timestamp,power.draw,power.draw.instant,utilization.gpu --format=csv -l 1 \
  -f "$out/smi-1s-noindex.csv" &
p2=$!
nvidia-smi --query-gpu=timestamp,power.draw,power.draw.instant --format=csv -l 5 \
  -f "$out/smi-5s.csv" &
p3=$!
nvidia-smi --query-gpu=timestamp,index,power.draw,utilization.gpu,memory.used \
  --format=csv,noheader,nounits -lms 200 -f "$out/smi-200ms-noheader.csv" &
p4=$!
nvidia-smi dmon -s pucm -o DT -f "$out/dmon-dt.txt" &
p5=$!
nvidia-smi dmon --gpm-metrics 1,2,3,5,10 -s pu -f "$out/dmon-gpm.txt" &
p6=$!
sleep 2
cat >"$out/loop.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
time.sleep(3)
end = time.time() + 10  # steady: at the power cap
while time.time() < end:
    c = a @ b
torch.cuda.synchronize()
for _ in range(12):  # bursty: 0.25 s of compute in each second
    end = time.time() + 0.25
    while time.time() < end:
        c = a @ b
    torch.cuda.synchronize()
    time.sleep(0.75)
time.sleep(3)
PY
"$g" profile -s 100 -o "$out/profile.db" -f -- python3 "$out/loop.py" >"$out/profile.log" 2>&1
sleep 2
# As jobs end: the 100 ms and noheader loggers killed (SIGKILL: nvidia-smi -f writes in 4 KiB
# blocks, so the tail is lost and the last line cut), the others interrupted (SIGINT).
kill -INT $p2 $p3 $p5 $p6 2>/dev/null
kill -KILL $p1 $p4 2>/dev/null
wait 2>/dev/null
"$g" analyze "$out/profile.db" -d none --json >"$out/profile.json" 2>>"$out/analyze.log"
for f in smi-100ms.csv smi-1s-noindex.csv smi-5s.csv dmon-dt.txt dmon-gpm.txt; do
  "$g" import "$out/$f" -o "$out/$f.db" -f >"$out/$f.import.log" 2>&1
  "$g" analyze "$out/$f" -d none --json >"$out/$f.json" 2>"$out/$f.analyze.log"
done
"$g" import "$out/smi-200ms-noheader.csv" -o "$out/smi-200ms-noheader.csv.db" -f \
  --query-gpu timestamp,index,power.draw,utilization.gpu,memory.used \
  >"$out/smi-200ms-noheader.csv.import.log" 2>&1
"$g" analyze "$out/smi-100ms.csv" --no-color >"$out/smi-100ms.txt" 2>&1
python3 - "$out" <<'PY'
import json, sqlite3, sys
out = sys.argv[1]
run = sqlite3.connect(f"{out}/profile.db")
t0, t1 = run.execute("SELECT start_wall_ns, end_wall_ns FROM runs").fetchone()
# The truth: the energy counter over the profile (its first and last readings).
e = run.execute("SELECT wall_ns, energy_mj FROM samples WHERE energy_mj IS NOT NULL "
                "ORDER BY wall_ns").fetchall()
truth = (e[-1][1] - e[0][1]) / 1000.0
w0, w1 = e[0][0], e[-1][0]
print(f"profile: {len(e)} counter readings over {(w1 - w0) / 1e9:.2f} s, {truth:.1f} J "
      f"(mean {truth / ((w1 - w0) / 1e9):.1f} W)")

def integrate(db, column):
    rows = sqlite3.connect(db).execute(
        f"SELECT wall_ns, {column} FROM samples WHERE {column} IS NOT NULL AND device_index = 0 "
        "ORDER BY wall_ns").fetchall()
    # Linear interpolation at the window's edges, trapezoids inside.
    def at(t):
        for (ta, pa), (tb, pb) in zip(rows, rows[1:]):
            if ta <= t <= tb:
                return pa + (pb - pa) * (t - ta) / (tb - ta) if tb > ta else pa
        return None
    pts = [(w0, at(w0))] + [(t, p) for t, p in rows if w0 < t < w1] + [(w1, at(w1))]
    if any(p is None for _, p in pts):
        return None, len(rows)
    return sum((tb - ta) / 1e9 * (pa + pb) / 2 for (ta, pa), (tb, pb) in zip(pts, pts[1:])), len(rows)

for f, cols in [("smi-100ms.csv", ["power_w", "power_instant_w", "power_average_w"]),
                ("smi-1s-noindex.csv", ["power_w", "power_instant_w"]),
                ("smi-5s.csv", ["power_w", "power_instant_w"]),
                ("smi-200ms-noheader.csv", ["power_w"]),
                ("dmon-dt.txt", ["power_w"]), ("dmon-gpm.txt", ["power_w"])]:
    for c in cols:
        try:
            j, n = integrate(f"{out}/{f}.db", c)
        except Exception as ex:
            print(f"{f} {c}: {ex}"); continue
        if j is None:
            print(f"{f} {c}: does not cover the window ({n} samples)"); continue
        print(f"{f} {c}: {n} samples, {j:.1f} J over the window, {100 * (j / truth - 1):+.2f} % "
              "vs the counter")
p = json.load(open(f"{out}/profile.json"))
for f in ["smi-100ms.csv", "dmon-gpm.txt"]:
    try:
        a = json.load(open(f"{out}/{f}.json"))
    except Exception as ex:
        print(f, ex); continue
    g, pg = a["gpus"][0], p["gpus"][0]
    print(f"{f}: activity_metric {g['activity_metric']}, samples {g['samples']}, "
          f"sm_active {g['over_time'].get('sm_active_pct')}, profile sm_active "
          f"{pg['over_time']['sm_active_pct']['mean']:.2f}")
PY
for f in "$out"/*.csv "$out"/dmon-*.txt; do echo "== $f: $(wc -l <"$f") lines, last: $(tail -c 120 "$f" | tail -1)"; done
cat "$out"/*.import.log
ls -la "$out"

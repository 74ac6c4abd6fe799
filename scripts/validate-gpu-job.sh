#!/usr/bin/env bash
# gpuscope job on a real GPU (docs/validation.md): `gpuscope serve` on the real driver pushes
# to a VictoriaMetrics while `gpuscope profile` records a PyTorch loop; then `gpuscope job
# --hosts` reads the same seconds back from the server. Read-only for the GPU.
# Usage: scripts/validate-gpu-job.sh BUNDLE OUT_DIR   (BUNDLE from scripts/gpu-bundle.sh, with
# victoria-metrics copied into its bin/)
set -uo pipefail
bundle=$1
out=$2
mkdir -p "$out"
g=$bundle/bin/gpuscope
"$bundle/bin/victoria-metrics" -storageDataPath=/tmp/gs-vm -httpListenAddr=127.0.0.1:18428 \
  -search.latencyOffset=0s -loggerLevel=ERROR >"$out/vm.log" 2>&1 &
vm=$!
for _ in $(seq 1 100); do curl -sf http://127.0.0.1:18428/health >/dev/null && break; sleep 0.1; done
"$g" serve --listen 127.0.0.1:19400 -i 250 --node-name gpu-node --push http://127.0.0.1:18428 \
  >"$out/serve.log" 2>&1 &
serve=$!
sleep 2
cat >"$out/loop.py" <<'PY'
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
time.sleep(2)
end = time.time() + 15
while time.time() < end:
    c = a @ b
torch.cuda.synchronize()
time.sleep(2)
PY
from=$(date +%s)
"$g" profile -s 250 -o "$out/profile.db" -f -- python3 "$out/loop.py" >"$out/profile.log" 2>&1
to=$(($(date +%s) + 1))
sleep 2
kill "$serve"; wait "$serve"
for d in all leading; do
  "$g" analyze "$out/profile.db" -d $d --json >"$out/profile-$d.json" 2>>"$out/analyze.log"
  "$g" job --hosts gpu-node --from "$from" --to "$to" --prometheus http://127.0.0.1:18428 -d $d \
    --json >"$out/job-$d.json" 2>"$out/job-$d.log"
done
"$g" job --hosts gpu-node --from "$from" --to "$to" --prometheus http://127.0.0.1:18428 \
  --no-color >"$out/job.txt" 2>&1
kill "$vm"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
for d in ("all", "leading"):
    p, j = (json.load(open(f"{out}/{w}-{d}.json")) for w in ("profile", "job"))
    pg = {g["uuid"]: g for g in p["gpus"]}
    for g in j["gpus"]:
        a = pg.get(g["uuid"])
        if a is None: print("job GPU not in profile:", g["uuid"]); continue
        print(f"-d {d} {g['uuid']}: activity {100*a['activity']:.2f} % vs {100*g['activity']:.2f} %, "
              f"energy {a['energy_j']} vs {g['energy_j']}, duration {p['duration_s']:.1f} vs {j['duration_s']:.1f} s")
PY
ls -la "$out"

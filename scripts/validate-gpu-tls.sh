#!/usr/bin/env bash
# serve on the real driver, plain and with --web-config (TLS + basic auth): the page, resident
# memory, the libraries mapped, 500 keep-alive scrapes' times, and the 401s. Runs from a bundle
# (scripts/gpu-bundle.sh build .gpubundle) that holds tls/cert.pem, tls/key.pem and tls/web.yml
# (a user p with password pw); results in $OUT (docs/validation.md). EXTRA_ARGS="--simulate h100"
# tries it here.
B=${BUNDLE:-$(cd "$(dirname "$0")" && pwd)}
G=$B/bin/gpuscope
O=${OUT:-/tmp/out}
mkdir -p "$O"
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,mig.mode.current --format=csv; } > "$O/gpu.txt" 2>&1
urls() { for i in $(seq 500); do printf -- '-o /dev/null %s ' "$1"; done; }
run() {  # run NAME PORT URL CURLARGS... -- SERVEARGS...
  local name=$1 port=$2 url=$3; shift 3
  local curlargs=()
  while [ "$1" != "--" ]; do curlargs+=("$1"); shift; done; shift
  "$G" serve --listen 127.0.0.1:$port ${EXTRA_ARGS:-} "$@" >"$O/$name.out" 2>"$O/$name.err" &
  local pid=$!
  sleep 8
  curl -s "${curlargs[@]}" "$url" >"$O/$name.page"
  grep -E "VmRSS|VmHWM" /proc/$pid/status >"$O/$name.rss"
  grep -oE '/[^ ]*\.so[^ ]*' /proc/$pid/maps | sort -u >"$O/$name.maps"
  curl -s "${curlargs[@]}" -w '%{time_total}\n' $(urls "$url") >"$O/$name.times"
  grep -E "VmRSS" /proc/$pid/status >>"$O/$name.rss"
  if [ "$name" = tls ]; then
    curl -s -o /dev/null -w '%{http_code}\n' --cacert "$B/tls/cert.pem" "$url" >"$O/tls.noauth"
    curl -s -o /dev/null -w '%{http_code}\n' --cacert "$B/tls/cert.pem" -u p:wrong "$url" >>"$O/tls.noauth"
    curl -s --cacert "$B/tls/cert.pem" -u p:pw "$url" | grep exporter_ >>"$O/tls.noauth"
  fi
  kill $pid; wait $pid; echo "exit $?" >>"$O/$name.err"
}
run plain 19400 http://127.0.0.1:19400/metrics -- 
run tls 19401 https://127.0.0.1:19401/metrics --cacert "$B/tls/cert.pem" -u p:pw -- --web-config "$B/tls/web.yml"
for n in plain tls; do
  sort -n "$O/$n.times" | awk -v name=$n '{a[NR]=$1} END {printf "%s: n=%d p50=%.2fms p99=%.2fms max=%.2fms\n", name, NR, a[int(NR*0.5)]*1000, a[int(NR*0.99)]*1000, a[NR]*1000}' 
done >"$O/summary.txt"
cd "$O" && tar czf all.tgz *.txt *.err *.rss *.maps *.noauth *.page 2>/dev/null
cat "$O/summary.txt" "$O"/*.rss "$O/tls.noauth" "$O/gpu.txt"; head -3 "$O/plain.err" "$O/tls.err"

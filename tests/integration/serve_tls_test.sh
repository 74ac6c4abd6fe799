#!/usr/bin/env bash
# `gpuscope serve --web-config` against real components (docs/live.md, "Security"):
# certificates made by the openssl command, a bcrypt hash made by the system's crypt library,
# curl and openssl s_client as clients, and a real Prometheus scraping over TLS with basic
# authentication and with mutual TLS. Then the certificate rotates under the running exporter,
# hostile clients (connections that never finish a handshake, a flood of handshakes) stay
# bounded, and bad inputs (an expired certificate, a key that does not match, a key others may
# read, a file that is not YAML, an unknown key) get clear errors.
# Usage: serve_tls_test.sh GPUSCOPE_BINARY. Exit 77 (skip) without openssl, curl, python3 or
# Prometheus.
set -euo pipefail
gpuscope=$(realpath "$1")
for tool in openssl curl python3 prometheus; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
work=$(mktemp -d /tmp/gpuscope-tls-test.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export GPUSCOPE_SIM_STATE=$work/sim-state.json

failures=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
source "$(dirname "${BASH_SOURCE[0]}")/../support/ports.sh"  # free_port
wait_for() {  # wait_for COMMAND...: polls for up to 60 s
  for _ in $(seq 1 600); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

# 1. Certificates: a CA, the exporter's certificate for 127.0.0.1, a client's; a bcrypt hash.
cd "$work"
make_cert() {  # make_cert NAME SUBJECT DAYS [EXTFILE]
  openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" \
    -days "$3" ${4:+-extfile "$4"} 2>/dev/null
  chmod 600 "$1.key"
}
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 \
  -subj "/CN=gpuscope test CA" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >san.ext
make_cert server "/CN=exporter one" 30 san.ext
make_cert client "/CN=prometheus" 30
password='correct horse battery staple'
echo -n "$password" >password.txt
hash=$(python3 -W ignore -c 'import crypt, sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1024)))' "$password")
case "$hash" in \$2b\$*) ok "bcrypt hash made by the system's crypt" ;; *) fail "no bcrypt hash: $hash" ;; esac
cat >web-basic.yml <<EOF
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prometheus: '$hash'
http_server_config:
  headers:
    X-Content-Type-Options: nosniff
EOF
cat >web-mtls.yml <<EOF
tls_server_config:
  cert_file: $work/server.crt
  key_file: $work/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: ca.crt
  min_version: TLS12
EOF

started=0
start_serve() {  # start_serve PORT CONFIG LOG: serves the simulated H100 with CONFIG; pid in $started
  "$gpuscope" serve --simulate h100 --listen "127.0.0.1:$1" --interval 200 --web-config "$2" \
    >/dev/null 2>"$3" &
  started=$!
  pids+=("$started")
}
basic_port=$(free_port)
start_serve "$basic_port" "$work/web-basic.yml" basic.log
basic_pid=$started
mtls_port=$(free_port)
start_serve "$mtls_port" "$work/web-mtls.yml" mtls.log
mtls_pid=$started
base=https://127.0.0.1:$basic_port
wait_for curl -sf --cacert ca.crt -u "prometheus:$password" "$base/healthz" || { fail "serve never answered over TLS"; cat basic.log; }
grep -q "at https://127.0.0.1:$basic_port/metrics with basic authentication" basic.log \
  && ok "serve says https and basic authentication" || { fail "start line"; cat basic.log; }

for library in libssl libevent_openssl libcrypt. libgpuscope_webconfig; do
  grep -q "/$library" "/proc/$basic_pid/maps" && ok "$library loaded for the web config" || fail "$library not loaded"
done

# 2. curl: no credentials, a wrong password, the right one; HEAD and keep-alive over TLS.
code() { curl -s -o /dev/null -w '%{http_code}' --cacert ca.crt "$@" || true; }
check "no credentials: 401" 401 "$(code "$base/metrics")"
check "a wrong password: 401" 401 "$(code -u prometheus:wrong "$base/metrics")"
check "an unknown user: 401" 401 "$(code -u someone:"$password" "$base/metrics")"
check "an unknown path asks for credentials first" 401 "$(code "$base/nothing")"
check "the right password: 200" 200 "$(code -u "prometheus:$password" "$base/metrics")"
check "an unknown path with credentials: 404" 404 "$(code -u "prometheus:$password" "$base/nothing")"
curl -s -D headers.txt -o page.txt --cacert ca.crt -u "prometheus:$password" "$base/metrics"
grep -q "^gpuscope_power_watts{" page.txt && ok "the page holds the GPU's series" || fail "no power series"
grep -qi "^X-Content-Type-Options: nosniff" headers.txt && ok "the web config's header is sent" || fail "no header"
failed=$(sed -n 's/^gpuscope_exporter_auth_failures_total \([0-9]*\)$/\1/p' page.txt)
[ "${failed:-0}" -ge 4 ] && ok "the refusals are counted ($failed)" || fail "auth failures counted: '$failed'"
head=$(curl -sI --cacert ca.crt -u "prometheus:$password" "$base/metrics")
grep -q "^HTTP/1.1 200" <<<"$head" && grep -qi "^Content-Length: [1-9]" <<<"$head" \
  && ok "HEAD over TLS" || fail "HEAD: $head"
curl -sv --cacert ca.crt -u "prometheus:$password" "$base/healthz" "$base/healthz" -o /dev/null \
  -o /dev/null 2>keepalive.txt
grep -qi "re-using existing connection" keepalive.txt && ok "keep-alive over TLS" || fail "no keep-alive"
check "plain HTTP to the TLS port gets no page" 000 \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$basic_port/metrics" || true)"

# 3. Mutual TLS: no client certificate is refused in the handshake; the client's is served.
status=0
curl -s -o /dev/null --cacert ca.crt "https://127.0.0.1:$mtls_port/metrics" 2>/dev/null || status=$?
[ "$status" -ne 0 ] && ok "mTLS: no client certificate, handshake refused (curl $status)" || fail "mTLS served without a certificate"
check "mTLS: the client's certificate is served" 200 \
  "$(code --cert client.crt --key client.key "https://127.0.0.1:$mtls_port/metrics")"
hs=$(curl -s --cacert ca.crt --cert client.crt --key client.key "https://127.0.0.1:$mtls_port/metrics" \
  | sed -n 's/^gpuscope_exporter_tls_handshake_failures_total \([0-9]*\)$/\1/p')
[ "${hs:-0}" -ge 1 ] && ok "refused handshakes are counted ($hs)" || fail "handshake failures: '$hs'"

# 4. A real Prometheus scrapes both, with basic auth and with a client certificate; the jobs
#    with a wrong password and without a certificate are down.
prom_port=$(free_port)
cat >prometheus.yml <<EOF
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: basic
    scheme: https
    tls_config: {ca_file: $work/ca.crt}
    basic_auth: {username: prometheus, password_file: $work/password.txt}
    static_configs: [{targets: ['127.0.0.1:$basic_port']}]
  - job_name: basic_wrong
    scheme: https
    tls_config: {ca_file: $work/ca.crt}
    basic_auth: {username: prometheus, password: not-it}
    static_configs: [{targets: ['127.0.0.1:$basic_port']}]
  - job_name: mtls
    scheme: https
    tls_config: {ca_file: $work/ca.crt, cert_file: $work/client.crt, key_file: $work/client.key}
    static_configs: [{targets: ['127.0.0.1:$mtls_port']}]
  - job_name: mtls_nocert
    scheme: https
    tls_config: {ca_file: $work/ca.crt}
    static_configs: [{targets: ['127.0.0.1:$mtls_port']}]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
  --web.listen-address="127.0.0.1:$prom_port" >/dev/null 2>prometheus.log &
pids+=("$!")
query() {  # query PROMQL: the values of the result, sorted, one per line
  curl -s "http://127.0.0.1:$prom_port/api/v1/query" --data-urlencode "query=$1" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print("\n".join(sorted(x["metric"].get("job","")+"="+x["value"][1] for x in r)))'
}
all_scraped() { [ "$(query 'count by (job) (up)' | wc -l)" -eq 4 ] && query 'gpuscope_power_watts' | grep -q mtls; }
if wait_for all_scraped; then
  check "Prometheus: up by job" "basic=1 basic_wrong=0 mtls=1 mtls_nocert=0" "$(query up | tr '\n' ' ' | sed 's/ $//')"
  check "Prometheus stored the GPU's power from both exporters" "basic=1 mtls=1" \
    "$(query 'count by (job) (gpuscope_power_watts)' | tr '\n' ' ' | sed 's/ $//')"
else
  fail "Prometheus never scraped both exporters"; query up; tail -5 prometheus.log
fi

# 5. The certificate rotates under the running exporter: the new one is served within seconds
#    and counted; a broken replacement keeps the previous one and says so.
serial() { openssl s_client -connect "127.0.0.1:$basic_port" -CAfile ca.crt </dev/null 2>/dev/null \
  | openssl x509 -noout -subject 2>/dev/null; }
check "the first certificate" "subject=CN = exporter one" "$(serial)"
make_cert next "/CN=exporter two" 30 san.ext
cp next.key server.key.new && mv server.key.new server.key
cp next.crt server.crt.new && mv server.crt.new server.crt
sleep 1.2
rotated() { [ "$(serial)" = "subject=CN = exporter two" ]; }
wait_for rotated && ok "the rotated certificate is served" || fail "still the old certificate: $(serial)"
grep -q "TLS certificate .*server.crt re-read" basic.log && ok "the rotation is said" || fail "rotation not said"
check "the exporter kept serving" 200 "$(code -u "prometheus:$password" "$base/metrics")"
echo "not a certificate" >server.crt
sleep 1.2
code -u "prometheus:$password" "$base/metrics" >/dev/null
wait_for grep -q "the previous certificate is still served" basic.log \
  && ok "a broken certificate is refused and said" || { fail "broken certificate not said"; tail -3 basic.log; }
check "the previous certificate is still served" "subject=CN = exporter two" "$(serial)"

# 6. Hostile clients over TLS: 200 connections that never send a ClientHello are closed after
#    the 5 s timeout; then 300 handshakes at once. The exporter's descriptors and memory stay
#    bounded and it answers afterwards.
fds() { ls "/proc/$basic_pid/fd" | wc -l; }
rss() { awk '/^VmRSS/ {print $2}' "/proc/$basic_pid/status"; }
fds_before=$(fds)
rss_before=$(rss)
python3 - "$basic_port" <<'EOF' || fail "a hostile client over TLS was not cut off"
import socket, ssl, sys, time, threading
port = int(sys.argv[1])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
time.sleep(7)  # past the exporter's 5 s timeout
closed = 0
for s in idle:
    s.settimeout(2)
    try:
        closed += s.recv(1) == b""
    except OSError:
        closed += 1
print(f"closed {closed} of {len(idle)}")
context = ssl.create_default_context(cafile="ca.crt")
def handshake():
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="127.0.0.1"):
                pass
    except OSError:
        pass
threads = [threading.Thread(target=handshake) for _ in range(300)]
for t in threads: t.start()
for t in threads: t.join()
# Endless headers inside a TLS session: cut at 8 KiB as over plain HTTP (a 4xx, then closed).
with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
    with context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(b"GET /metrics HTTP/1.1\r\nHost: t\r\n")
        sent = 0
        try:
            for _ in range(2000):  # 2 MB offered
                tls.sendall(b"X-Junk: " + b"a" * 1000 + b"\r\n")
                sent += 1
        except OSError:
            pass
        try:
            answer = tls.recv(100)
        except OSError:
            answer = b""
print(f"headers: {sent} sent, answer {answer[:12]!r}")
if sent == 2000 and not answer.startswith(b"HTTP/1.1 4"):
    sys.exit("endless headers over TLS were read to the end")
EOF
sleep 1
fds_after=$(fds)
rss_after=$(rss)
[ "$fds_after" -le $((fds_before + 5)) ] && ok "descriptors back to $fds_after (were $fds_before)" || fail "descriptors: $fds_before -> $fds_after"
[ "$rss_after" -le $((rss_before + 16384)) ] && ok "resident memory $rss_before -> $rss_after kB" || fail "memory grew: $rss_before -> $rss_after kB"
check "it answers after the flood" 200 "$(code -u "prometheus:$password" "$base/metrics")"

# 7. Bad inputs: each one a clear error naming what is wrong, before any GPU is opened.
expect_error() {  # expect_error DESCRIPTION TEXT CONFIG
  local out status=0
  out=$("$gpuscope" serve --simulate h100 --listen "127.0.0.1:$(free_port)" --web-config "$3" 2>&1 >/dev/null) || status=$?
  if [ "$status" -eq 2 ] && grep -qF -- "$2" <<<"$out"; then ok "$1"; else fail "$1 (exit $status): $out"; fi
}
make_cert old "/CN=old" 0 san.ext
sleep 1.1  # -days 0 ends now: past this second it has expired
printf 'tls_server_config:\n  cert_file: old.crt\n  key_file: old.key\n' >web-expired.yml
expect_error "an expired certificate" "expired on" web-expired.yml
printf 'tls_server_config:\n  cert_file: next.crt\n  key_file: client.key\n' >web-mismatch.yml
expect_error "a key that does not match" "does not match the certificate" web-mismatch.yml
printf 'tls_server_config: [cert_file\n' >web-broken.yml
expect_error "not YAML" "not YAML (line" web-broken.yml
printf 'tls_server_config:\n  cert_file: next.crt\n  key_file: next.key\n  cert_fiel: x\n' >web-typo.yml
expect_error "an unknown key is named" "unknown key tls_server_config.cert_fiel" web-typo.yml
printf 'basic_auth_users:\n  prometheus: %s\n' "$password" | sed 's/: \(.*\)/: "\1"/' >web-plain.yml
expect_error "a password that is not a bcrypt hash" "is not a bcrypt hash" web-plain.yml
if grep -qF "$password" <<<"$("$gpuscope" serve --simulate h100 --web-config web-plain.yml 2>&1 || true)"; then
  fail "the error repeats the password"
else
  ok "the error does not repeat the password"
fi
expect_error "a file that does not exist" "No such file" "$work/nothing.yml"
expect_error "a directory is not an empty config" "a directory" "$work"
expect_error "a device is refused, not read for ever" "not a regular file" /dev/zero
chmod 644 next.key
printf 'tls_server_config:\n  cert_file: next.crt\n  key_file: next.key\n' >web-open.yml
open_port=$(free_port)
start_serve "$open_port" "$work/web-open.yml" open.log
open_pid=$started
wait_for curl -sf --cacert ca.crt "https://127.0.0.1:$open_port/healthz" || fail "serve with an open key"
grep -q "may be read by every user (mode 644); chmod 600 it" open.log && ok "a key others may read is warned of" || { fail "no warning"; cat open.log; }
kill "$open_pid"

for pid in "$basic_pid" "$mtls_pid"; do kill "$pid"; done
echo "$failures failed"
[ $failures -eq 0 ]

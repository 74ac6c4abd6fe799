#!/usr/bin/env bash
# guard's shipped service and example rules (deploy/guard/, docs/guard.md): systemd's own check
# of the service (with the built binary in ExecStart), and the service's command with the
# example rules, once, against an empty squeue: the rules are valid and a cycle runs.
# Usage: guard_unit_test.sh GPUSCOPE REPO_ROOT. Exit 77 without systemd-analyze.
set -euo pipefail
gpuscope=$(realpath "$1")
dir=$2/deploy/guard
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
sed "s|/usr/bin/gpuscope|$gpuscope|" "$dir/gpuscope-guard.service" >"$work/gpuscope-guard.service"
systemd-analyze verify "$work/gpuscope-guard.service"
echo "ok: systemd verifies the service"
line=$(grep '^ExecStart=' "$dir/gpuscope-guard.service" | cut -d= -f2-)
read -r -a words <<<"$line"
[ "${words[0]##*/}" = gpuscope ] || { echo "FAIL: not a gpuscope command: $line"; exit 1; }
args=("${words[@]:1}")
for i in "${!args[@]}"; do [ "${args[$i]}" = /etc/gpuscope/guard.yaml ] && args[$i]=$dir/guard.yaml; done
printf '#!/bin/sh\necho %s\n' "'{\"jobs\": []}'" >"$work/squeue"
printf '#!/bin/sh\n' >"$work/sinfo"  # no node: nothing to drain, the server not asked
chmod +x "$work/squeue" "$work/sinfo"
out=$(GPUSCOPE_SQUEUE=$work/squeue GPUSCOPE_SINFO=$work/sinfo "$gpuscope" "${args[@]}" --once --state "$work/guard.db" \
  --prometheus http://127.0.0.1:9 2>&1) || { echo "FAIL: $line: $out"; exit 1; }
grep -q "0 running GPU jobs" <<<"$out" || { echo "FAIL: no cycle: $out"; exit 1; }
grep -q "a dry run" <<<"$out" || { echo "FAIL: the example rules must be a dry run: $out"; exit 1; }
echo "ok: gpuscope runs the service's command with the example rules (a dry run)"

#!/usr/bin/env bash
# The accounting database's shipped schedules (deploy/accounting/, docs/fleet.md): systemd's own
# check of the service and timer (with the built binary in ExecStart), and the cron line's
# command, which must be a command line gpuscope accepts.
# Usage: accounting_units_test.sh GPUSCOPE REPO_ROOT. Exit 77 without systemd-analyze.
set -euo pipefail
gpuscope=$(realpath "$1")
dir=$2/deploy/accounting
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
sed "s|/usr/bin/gpuscope|$gpuscope|" "$dir/gpuscope-jobs.service" >"$work/gpuscope-jobs.service"
cp "$dir/gpuscope-jobs.timer" "$work/"
systemd-analyze verify "$work/gpuscope-jobs.service" "$work/gpuscope-jobs.timer"
echo "ok: systemd verifies the service and the timer"
# The gpuscope command of the service and of the cron line, on a new database: every option is
# known and valid when gpuscope gets as far as asking for the first update's --from.
for line in "$(grep '^ExecStart=' "$dir/gpuscope-jobs.service" | cut -d= -f2-)" \
            "$(grep -v '^#' "$dir/gpuscope-jobs.cron" | grep 'gpuscope jobs' | sed 's/.*flock -n [^ ]* //; s/ 2>>.*//')"; do
  read -r -a words <<<"$line"
  [ "${words[0]##*/}" = gpuscope ] || { echo "FAIL: not a gpuscope command: $line"; exit 1; }
  args=("${words[@]:1}")
  for i in "${!args[@]}"; do [ "${args[$i]}" = /var/lib/gpuscope/accounting.db ] && args[$i]=$work/new.db; done
  rm -f "$work"/new.db*
  out=$("$gpuscope" "${args[@]}" 2>&1) && status=0 || status=$?
  grep -q "covers no period yet" <<<"$out" || { echo "FAIL: gpuscope refuses: $line: $out"; exit 1; }
  echo "ok: gpuscope accepts: ${words[*]:1}"
done

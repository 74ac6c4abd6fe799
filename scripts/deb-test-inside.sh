# The part of scripts/deb-test.sh that runs inside the fresh root, as root, with $DEB the package.
say() { echo "deb-test (inside): $*"; }
t0=$(date +%s)
apt-get update -qq
# man-db to read the pages; the package brings everything else it needs.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ca-certificates man-db >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$DEB" >/dev/null
t1=$(date +%s)
dpkg -l >packages.txt
say "installed with its dependencies in $((t1 - t0)) s: $(grep -c '^ii' packages.txt) packages in the root"
dpkg -L gpuscope | sort >/root/package-files.txt

cd /root
gpuscope --version
gpuscope devices --simulate h100 | tee devices.txt
grep -q "H100" devices.txt
gpuscope scenarios >scenarios.txt
grep -q h100x4-straggler scenarios.txt
gpuscope profile --simulate h100 -o run.db -- sleep 2
gpuscope analyze run.db | tee analysis.txt
grep -qi "energy" analysis.txt
gpuscope report run.db -o report.html
gpuscope report run.db -o plots.png
test -s report.html && test -s plots-timeseries.png
say "profiled, analysed, reported: report.html $(du -k report.html | cut -f1) KiB"

export MANWIDTH=80 PAGER=cat
# (into files: grep -q closing a pipe early would fail man with SIGPIPE under pipefail)
man gpuscope >man-gpuscope.txt
grep -q "gpuscope-profile(1)" man-gpuscope.txt
man gpuscope-profile >man-profile.txt
grep -q -- "--simulate" man-profile.txt
say "man gpuscope and man gpuscope-profile read"
words=$(bash -c 'source /usr/share/bash-completion/completions/gpuscope
  COMP_WORDS=(gpuscope profile --simulate h100x); COMP_CWORD=3; _gpuscope; echo "${COMPREPLY[*]}"')
[[ $words == *h100x4-straggler* ]]
test -f /usr/share/zsh/vendor-completions/_gpuscope
say "bash completion offers: $words"

# The C library, its development files and the Python module (built beside the package).
if [ -n "${OTHERS:-}" ]; then
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $OTHERS >/dev/null
  dpkg -L libgpuscope-dev >dev-files.txt
  grep -q /usr/include/gpuscope.h dev-files.txt && grep -q 'pkgconfig/gpuscope.pc' dev-files.txt
  GPUSCOPE_NVML_LIBRARY=/usr/lib/gpuscope/libgpuscope-sim-nvml.so \
    GPUSCOPE_SIM_SCENARIO=/usr/share/gpuscope/scenarios/h100.json python3 -c '
import time, gpuscope
with gpuscope.Monitor(sampling_ms=50) as mon:
    with mon.window("w") as w:
        time.sleep(0.3)
assert w.gpus[0].energy_source == "counter" and w.energy_j > 0, w
print("gpuscope (python):", gpuscope.library_version(), round(w.energy_j, 1), "J")
' | tee python.txt
  grep -q "J" python.txt
  say "python3-gpuscope measured a window of the simulated H100"
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq python3-gpuscope libgpuscope-dev libgpuscope0 >/dev/null
  test ! -e /usr/lib/python3/dist-packages/gpuscope && ! ls /usr/lib/*/libgpuscope.so* 2>/dev/null
  say "python3-gpuscope, libgpuscope-dev and libgpuscope0 removed"
fi

DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq gpuscope >/dev/null
test ! -e /usr/bin/gpuscope
# Without conffiles a removed package is gone from dpkg's database already: nothing to purge.
if dpkg-query -W gpuscope >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq gpuscope >/dev/null
  say "purged"
else
  say "apt-get remove left nothing for apt-get purge (the package has no conffiles)"
fi
if dpkg-query -W gpuscope >/dev/null 2>&1; then say "dpkg still knows gpuscope"; exit 1; fi
left=0
while IFS= read -r path; do
  [ "$path" != /. ] || continue
  [ -e "$path" ] || [ -L "$path" ] || continue
  # a folder other packages share (/usr/bin, /usr/share/man/man1) stays, and rightly
  if [ -d "$path" ] && dpkg -S "$path" >/dev/null 2>&1; then continue; fi
  say "left behind: $path"
  left=$((left + 1))
done </root/package-files.txt
[ $left -eq 0 ]
say "removed and purged: none of its $(wc -l </root/package-files.txt) paths left"

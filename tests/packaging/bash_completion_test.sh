#!/usr/bin/env bash
# Drives the generated bash completion in a real bash, as bash does on Tab: the script sourced,
# COMP_WORDS and COMP_CWORD set, the completion function called, COMPREPLY read. What it should
# offer comes from the program itself (its --help, `gpuscope scenarios`), not from this file.
# Usage: bash_completion_test.sh GPUSCOPE COMPLETION_SCRIPT
set -uo pipefail
gpuscope=$1
# shellcheck source=/dev/null
source "$2"
declare -F _gpuscope >/dev/null || { echo "FAIL: $2 defines no _gpuscope"; exit 1; }
failures=0

complete_words() {  # WORD...: the words of the line, the last the one being completed
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="$*"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _gpuscope gpuscope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
}

offers() {  # WHAT EXPECTED...: each EXPECTED word is in COMPREPLY
  local what=$1 word offered found
  shift
  for word in "$@"; do
    found=0
    for offered in "${COMPREPLY[@]}"; do [[ $offered == "$word" ]] && found=1; done
    if ((!found)); then
      echo "FAIL: $what: '$word' not offered (got: ${COMPREPLY[*]:0:20})"
      failures=$((failures + 1))
    fi
  done
}

offers_only() {  # WHAT EXPECTED...: COMPREPLY is exactly these words, in any order
  local what=$1
  shift
  offers "$what" "$@"
  if [ ${#COMPREPLY[@]} -ne $# ]; then
    echo "FAIL: $what: offered ${COMPREPLY[*]}, wanted only $*"
    failures=$((failures + 1))
  fi
}

# The commands, as gpuscope --help lists them.
mapfile -t commands < <("$gpuscope" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
[ ${#commands[@]} -ge 10 ] || { echo "FAIL: found only ${commands[*]} in gpuscope --help"; exit 1; }
complete_words gpuscope ""
offers_only "gpuscope <Tab>" "${commands[@]}"
complete_words gpuscope pro
offers_only "gpuscope pro<Tab>" profile
complete_words gpuscope --
offers "gpuscope --<Tab>" --help --version

# Every option of each command's --help, offered after a dash.
for command in "${commands[@]}"; do
  mapfile -t options < <("$gpuscope" "$command" --help | grep -oE '^  -[^ ]+' | tr -d ' ' | sed 's/{[^}]*}//g' | tr ',' '\n')
  complete_words gpuscope "$command" -
  offers "gpuscope $command -<Tab>" "${options[@]}"
done

# Values: the shipped scenarios as `gpuscope scenarios` lists them, after the option and after =.
mapfile -t scenarios < <("$gpuscope" scenarios | awk '/^$/ {exit} {print $1}')
complete_words gpuscope profile --simulate ""
offers_only "profile --simulate <Tab>" "${scenarios[@]}"
complete_words gpuscope devices --simulate = h100x
offers "devices --simulate=h100x<Tab>" h100x4-straggler h100x8-mig7
complete_words gpuscope analyze --carbon-source ""
offers_only "analyze --carbon-source <Tab>" uk electricitymaps
complete_words gpuscope report -d ""
offers_only "report -d <Tab>" leading trailing all none
complete_words gpuscope analyze --metric sm_
offers "analyze --metric sm_<Tab>" sm_active_pct sm_clock_mhz
complete_words gpuscope export --metrics power_w,gpu_u
offers_only "export --metrics power_w,gpu_u<Tab>" power_w,gpu_util_pct
complete_words gpuscope serve --naming ""
offers_only "serve --naming <Tab>" gpuscope dcgm jobstats amd
complete_words gpuscope monitor --metrics-source ""
offers_only "monitor --metrics-source <Tab>" auto gpm dcgm
complete_words gpuscope mark ""
offers_only "mark <Tab>" begin end point
complete_words gpuscope mark begin ""
offers_only "mark begin <Tab> (a phase name: nothing to offer)"

# Files where a file is expected (options and positionals), folders where a folder is.
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/runs" && touch "$dir/run.db" "$dir/report.html"
cd "$dir" || exit 1
complete_words gpuscope report -o rep
offers_only "report -o rep<Tab>" report.html
complete_words gpuscope analyze --region DE r
offers_only "analyze --region DE r<Tab>" report.html run.db runs
complete_words gpuscope profile --push-spill-dir ""
offers_only "profile --push-spill-dir <Tab>" runs
# After --: the command to run, then its files; an option's value is not a command.
complete_words gpuscope profile -o run.db -- slee
offers "profile -o run.db -- slee<Tab>" sleep
complete_words gpuscope profile -o run.db -- sleep ru
offers_only "profile -- sleep ru<Tab>" run.db runs
complete_words gpuscope profile -o run.db slee
offers "profile -o run.db slee<Tab>" sleep

echo "bash_completion: ${#commands[@]} commands, $failures failures"
[ $failures -eq 0 ]

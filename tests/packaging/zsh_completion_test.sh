#!/usr/bin/env bash
# The generated zsh completion: zsh parses it (zsh -n), and loading it through compinit from a
# folder in $fpath defines the function of every command gpuscope --help lists.
# Usage: zsh_completion_test.sh GPUSCOPE COMPLETION_SCRIPT
set -euo pipefail
gpuscope=$1
script=$2
if ! command -v zsh >/dev/null; then
  echo "zsh_completion: zsh is not installed (scripts/setup.sh installs it)" >&2
  exit 1
fi
zsh -n "$script"
mapfile -t commands < <("$gpuscope" --help | sed -n '/^Subcommands:/,/^$/p' | awk 'NR > 1 && NF {print $1}')
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir "$home/functions"
cp "$script" "$home/functions/_gpuscope"
# Autoload it as compinit would, run it once outside completion (it then only registers), and
# list the functions it defined.
defined=$(HOME=$home ZDOTDIR=$home zsh -f -c '
  fpath=("$1" $fpath); autoload -Uz compinit && compinit -u -d "$1/.zcompdump"
  [[ ${_comps[gpuscope]} == _gpuscope ]] || { echo "compinit did not register _gpuscope"; exit 1; }
  source "$1/_gpuscope"; print -l ${(k)functions[(I)_gpuscope_*]}' zsh "$home/functions")
failures=0
for command in "${commands[@]}"; do
  if ! grep -qx "_gpuscope_${command//-/_}" <<<"$defined"; then
    echo "FAIL: no _gpuscope_${command//-/_} for 'gpuscope $command' (defined: $defined)"
    failures=$((failures + 1))
  fi
done
echo "zsh_completion: ${#commands[@]} commands, $failures failures"
[ $failures -eq 0 ]

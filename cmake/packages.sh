#!/usr/bin/env bash
# Prints the Debian/Ubuntu packages of the given groups of cmake/packages.txt on one line, e.g.
#   apt-get install -y $(cmake/packages.sh common emu)
# Groups: common, emu, cuda, rocm, docs, sandbox, model. An unknown group is an error (a typo must not quietly
# install nothing).
set -euo pipefail
list="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/packages.txt"
[[ $# -gt 0 ]] || { echo "usage: $0 GROUP... (common, emu, cuda, rocm, docs, sandbox, model)" >&2; exit 2; }
for group in "$@"; do
  case "$group" in common|emu|cuda|rocm|docs|sandbox|model) ;; *) echo "$0: unknown group '$group'" >&2; exit 2 ;; esac
done
awk -v groups=" $* " '
  /^[[:space:]]*(#|$)/ { next }
  index(groups, " " $1 " ") && !seen[$2]++ { printf "%s%s", sep, $2; sep = " " }
  END { print "" }' "$list"

#!/usr/bin/env bash
# ./gpulab new-lab NN-name ["Title"]: the skeleton of a lab that builds, passes its correctness
# checks and fails its performance check (the stub is slow on purpose). It writes only inside the
# lab's own folders, plus one row of the README's lab table:
#   labs/NN-name/           README.md, NAME.hpp (the contract), NAME.cu (the stub)
#   solutions/NN-name/      NAME.cu (the reference)
#   grader/labs/NN-name/    CMakeLists.txt, checks.cpp, rubric.ini
#   grader/tests/submissions/NN-name/   solution.expect, student.expect, stub/NAME.cu (a copy of
#                                       the stub as shipped: the one the verdict suite grades)
# NAME is the part after NN- with '-' turned into '_' (the contract function's name).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
lab="${1:-}"
title="${2:-}"
if [[ ! "$lab" =~ ^[0-9][0-9]-[a-z][a-z0-9-]*$ ]]; then
  echo "usage: ./gpulab new-lab NN-name [\"Title\"]   (e.g. 07-histogram; lower case, digits and '-')" >&2
  exit 2
fi
nn="${lab%%-*}"
name="${lab#*-}"
func="${name//-/_}"
[[ -n "$title" ]] || title="${name//-/ }"
for d in "labs/$lab" "solutions/$lab" "grader/labs/$lab" "grader/tests/submissions/$lab"; do
  if [[ -e "$root/$d" ]]; then echo "new-lab: $d already exists" >&2; exit 2; fi
done
if compgen -G "$root/labs/$nn-*" >/dev/null; then
  echo "new-lab: a lab numbered $nn exists already: $(cd "$root/labs" && ls -d "$nn"-*)" >&2
  exit 2
fi

tpl="$root/grader/new-lab/template"
put() {  # put TEMPLATE DESTINATION
  mkdir -p "$(dirname "$root/$2")"
  sed -e "s/@NN@/$nn/g" -e "s/@LAB@/$lab/g" -e "s/@FUNC@/$func/g" -e "s|@TITLE@|${title//|/\\|}|g" "$tpl/$1" >"$root/$2"
  echo "  created $2"
}
put lab/README.md "labs/$lab/README.md"
put lab/contract.hpp "labs/$lab/$func.hpp"
put lab/stub.cu "labs/$lab/$func.cu"
put solution/solution.cu "solutions/$lab/$func.cu"
put grader/CMakeLists.txt "grader/labs/$lab/CMakeLists.txt"
put grader/checks.cpp "grader/labs/$lab/checks.cpp"
put grader/rubric.ini "grader/labs/$lab/rubric.ini"
put submissions/solution.expect "grader/tests/submissions/$lab/solution.expect"
put submissions/student.expect "grader/tests/submissions/$lab/student.expect"
put lab/stub.cu "grader/tests/submissions/$lab/stub/$func.cu"

# One row in the README's lab table, after the last row (kept in lab order).
readme="$root/README.md"
row="| [$lab](labs/$lab/README.md) | $title | \`labs/$lab/$func.cu\` |"
python3 - "$readme" "$row" <<'PY'
import re, sys
path, row = sys.argv[1], sys.argv[2]
lines = open(path).read().split("\n")
rows = [i for i, l in enumerate(lines) if re.match(r"^\| \[\d\d-", l)]
if not rows:
    sys.exit("new-lab: no lab table in README.md")
at = rows[-1] + 1
for i in rows:
    if lines[i] > row:
        at = i
        break
lines.insert(at, row)
open(path, "w").write("\n".join(lines))
PY
echo "  added a row to README.md's lab table"
echo "new-lab: $lab is ready; reconfigure (./gpulab grade $nn does it) and grade it: ./gpulab grade $nn"

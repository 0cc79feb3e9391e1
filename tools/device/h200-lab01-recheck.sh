#!/usr/bin/env bash
# Lab 01 on the GPU after the rubric change (n = 16384, 0.5 of copy): the reference, the stub, a
# plain coalesced submission, and the grader tests that involve them. Usage: repository root.
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
cmake --preset cuda > "$out/configure.log" 2>&1 && cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; exit 1; }
for impl in "--impl solution" "--impl student" "--submission grader/tests/submissions/01-coalescing/good_warp_shuffle.cu"; do
  # shellcheck disable=SC2086
  ./gpulab grade 01 $impl > "$out/grade.txt" 2>&1
  echo "grade 01 $impl: exit $?"
  grep -hE "^  (pass|FAIL)  perf|GB/s" "$out/grade.txt"
done
build/cuda/grader/tests/grader_verdict_tests --gtest_filter='Grader.*:*good_warp*:*exits_early*:*01_coalescing_solution*:*01_coalescing_student*' \
  > "$out/verdicts.log" 2>&1
echo "verdict tests: exit $?"; grep -E "^\[  (  OK|FAILED|PASSED|SKIPPED) " "$out/verdicts.log"

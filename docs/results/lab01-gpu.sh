#!/usr/bin/env bash
# Builds the cuda preset on the GPU machine and grades lab 01 there: the reference three times
# (to show the spread), the stub once, and the grader's own tests. Logs go to $OUT (or ./out).
# Usage (from the repository root): bash docs/results/lab01-gpu.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
cmake --preset cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
for i in 1 2 3; do
  ./gpulab grade 01 --impl solution --json "$out/lab01-solution-$i.json" > "$out/lab01-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
./gpulab grade 01 --json "$out/lab01-student.json" > "$out/lab01-student.txt" 2>&1
echo "student: exit $?"
ctest --test-dir build/cuda --output-on-failure -j 4 -E "Verdict" > "$out/ctest-unit.log" 2>&1
echo "unit tests: exit $?"; tail -3 "$out/ctest-unit.log"
build/cuda/grader/tests/grader_verdict_tests \
  --gtest_filter='*crash*:*infinite*:*student*:*solution*:*wrong_answer*:*out_of_bounds*' > "$out/verdicts.log" 2>&1
echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) " "$out/verdicts.log"
cat "$out/gpu.csv"
grep -hE "PASSED|FAILED|pass  perf|FAIL  perf|GB/s" "$out"/lab01-*.txt | head -40

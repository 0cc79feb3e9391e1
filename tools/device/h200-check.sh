#!/usr/bin/env bash
# A short check on the GPU machine after changes to the portability layer or the grader: builds
# the cuda preset, runs the portability tests and the SGEMM steps test on the GPU, grades labs 01
# and 06 (reference and stub), and runs the GPU-relevant verdict tests. Usage: repository root.
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
cmake --preset cuda > "$out/configure.log" 2>&1 && cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 \
  || { grep -E "error" "$out/build.log" | head -30; exit 1; }
build/cuda/common/tests/portability_tests > "$out/portability.log" 2>&1; echo "portability tests: exit $?"
grep -E "^\[  (PASSED|FAILED) " "$out/portability.log"
build/cuda/solutions/06-sgemm/sgemm_steps_test > "$out/sgemm_steps.log" 2>&1; echo "sgemm steps test: exit $?"
tail -1 "$out/sgemm_steps.log"
for lab in 01 06; do
  for impl in solution student; do
    ./gpulab grade "$lab" --impl "$impl" --json "$out/lab$lab-$impl.json" > "$out/lab$lab-$impl.txt" 2>&1
    echo "grade $lab --impl $impl: exit $? :: $(grep -hE '^  (pass|FAIL)  perf' "$out/lab$lab-$impl.txt")"
  done
done
build/cuda/grader/tests/grader_verdict_tests \
  --gtest_filter='*exits_early*:*crash*:*infinite*:*float4_unaligned*:*06_sgemm*:Grader.*' > "$out/verdicts.log" 2>&1
echo "verdict tests: exit $?"; grep -E "^\[  (  OK|FAILED|PASSED) " "$out/verdicts.log"

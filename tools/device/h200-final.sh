#!/usr/bin/env bash
# One call on the GPU machine: build the cuda preset; validate the emulator's memory metrics
# against Nsight Compute; grade labs 01 and 06 (references three times each, stubs once); run the
# grader's verdict tests that apply on a GPU. Everything lands in $OUT/results.tar.gz, a summary in
# $OUT/summary.txt. Usage (repository root): bash tools/device/h200-final.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
logs="$out/logs"
mkdir -p "$logs"
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.mem --format=csv > "$logs/gpu.csv" 2>&1
note "$(tail -1 "$logs/gpu.csv")"
cmake --preset cuda > "$logs/configure.log" 2>&1 || { tail -30 "$logs/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" > "$logs/build.log" 2>&1 || { grep -E "error" "$logs/build.log" | head -30; exit 1; }
note "build: ok"

bash tools/validation/ncu.sh build/cuda "$logs/ncu.csv" > "$logs/ncu.log" 2>&1
note "ncu: exit $? ($(grep -c '"' "$logs/ncu.csv" 2>/dev/null) rows)"

for lab in 01 06; do
  for i in 1 2 3; do
    ./gpulab grade "$lab" --impl solution --json "$logs/lab$lab-solution-$i.json" > "$logs/lab$lab-solution-$i.txt" 2>&1
    note "lab $lab solution run $i: exit $? :: $(grep -hE '^  (pass|FAIL)  perf' "$logs/lab$lab-solution-$i.txt")"
  done
  ./gpulab grade "$lab" --json "$logs/lab$lab-student.json" > "$logs/lab$lab-student.txt" 2>&1
  note "lab $lab student: exit $? :: $(grep -hE '^  (pass|FAIL)  perf' "$logs/lab$lab-student.txt")"
  grep -hE "GB/s|TFLOP/s" "$logs"/lab$lab-*.txt | sed 's/^ */    /' | sort -u | tee -a "$summary"
done

build/cuda/grader/tests/grader_verdict_tests \
  --gtest_filter='*crash*:*infinite*:*wrong_answer*:*out_of_bounds*:*06_sgemm*:Grader.*' > "$logs/verdicts.log" 2>&1
note "verdict tests: exit $? :: $(grep -E '^\[  (PASSED|FAILED) ' "$logs/verdicts.log" | tr '\n' ' ')"
ctest --test-dir build/cuda -E "Verdict|Grader" -j 8 > "$logs/ctest.log" 2>&1
note "other tests: exit $? :: $(grep -E 'tests passed' "$logs/ctest.log")"

tar -czf "$out/results.tar.gz" -C "$out" logs
cat "$summary"

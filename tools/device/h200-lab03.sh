#!/usr/bin/env bash
# Lab 03 on the GPU machine: builds the cuda preset, grades the reference three times (the spread,
# and "passes three runs in a row"), the stub once, and every step of the ladder plus the hidden
# unpadded and swizzled submissions (their bandwidth / copy ratios place the rubric threshold),
# then ncu's bank-conflict metrics per step. Logs and JSON go to $OUT (or ./out).
# Usage (from the repository root): bash tools/device/h200-lab03.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
cmake --preset cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
for i in 1 2 3; do
  ./gpulab grade 03 --impl solution --json "$out/lab03-solution-$i.json" > "$out/lab03-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
./gpulab grade 03 --json "$out/lab03-student.json" > "$out/lab03-student.txt" 2>&1
echo "student: exit $?"
for f in solutions/03-bank-conflicts/steps/*.cu grader/tests/submissions/03-bank-conflicts/{unpadded_tile,swizzled,padded_by_two}.cu; do
  name="$(basename "$f" .cu)"
  ./gpulab grade 03 --submission "$f" --json "$out/lab03-$name.json" > "$out/lab03-$name.txt" 2>&1
  echo "$name: exit $?"
done
./gpulab calibrate 03 > "$out/lab03-calibrate.txt" 2>&1
# Bank conflicts as the hardware counts them, per step (one small grade under ncu per step).
if command -v ncu >/dev/null 2>&1; then
  for f in solutions/03-bank-conflicts/steps/*.cu; do
    name="$(basename "$f" .cu)"
    ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum \
      --target-processes all --csv \
      ./gpulab grade 03 --submission "$f" --no-performance > "$out/ncu-$name.csv" 2>&1
    echo "ncu $name: exit $?"
  done
fi
build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*03_bank_conflicts*' > "$out/verdicts.log" 2>&1
echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) " "$out/verdicts.log"
cat "$out/gpu.csv"
grep -hE "PASSED|FAILED|pass  perf|FAIL  perf|GB/s" "$out"/lab03-*.txt | head -60

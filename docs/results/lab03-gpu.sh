#!/usr/bin/env bash
# Lab 03 on the GPU machine: builds the cuda preset, grades the reference three times (the spread,
# and "passes three runs in a row"), the stub once, and every step of the ladder plus the hidden
# unpadded and swizzled submissions (their bandwidth / copy ratios place the rubric threshold),
# then ncu's bank-conflict metrics per step. Logs and JSON go to $OUT (or ./out).
# Usage (from the repository root): bash docs/results/lab03-gpu.sh
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
# Each step is graded as a hand-in; its runner is kept (GPULAB_KEEP_HANDINS) so that Nsight Compute
# can profile it alone: bank conflicts as the hardware counts them, on the first transpose launches
# of the timed check (16384 x 16384), not the whole grade.
metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes.sum,gpu__time_duration.sum
for f in solutions/03-bank-conflicts/steps/*.cu grader/tests/submissions/03-bank-conflicts/{unpadded_tile,swizzled,padded_by_two}.cu; do
  name="$(basename "$f" .cu)"
  [[ -f "$f" ]] || { echo "$name: missing"; continue; }
  rm -rf build/cuda/handins
  GPULAB_KEEP_HANDINS=1 ./gpulab grade 03 --submission "$f" --json "$out/lab03-$name.json" > "$out/lab03-$name.txt" 2>&1
  echo "$name: exit $?"
  runner="$(ls -d build/cuda/handins/03-bank-conflicts-submission-*/runner 2>/dev/null | head -1)"
  if command -v ncu >/dev/null 2>&1 && [[ -x "$runner" ]]; then
    timeout 240 ncu --metrics "$metrics" --kernel-name regex:'transpose' --launch-count 2 --csv \
      "$runner" --rubric grader/labs/03-bank-conflicts/rubric.ini --gtest_filter='performance.bandwidth_vs_copy' \
      > "$out/ncu-$name.csv" 2> "$out/ncu-$name.log"
    echo "ncu $name: exit $?"
  fi
done
./gpulab calibrate 03 > "$out/lab03-calibrate.txt" 2>&1
build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*03_bank_conflicts*' > "$out/verdicts.log" 2>&1
echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) " "$out/verdicts.log"
cat "$out/gpu.csv"
grep -hE "PASSED|FAILED|pass  perf|FAIL  perf|GB/s" "$out"/lab03-*.txt | head -60

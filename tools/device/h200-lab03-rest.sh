#!/usr/bin/env bash
# Lab 03's remaining GPU runs (after tools/device/h200-lab03.sh's first run): the transpose probe,
# the swizzled step graded and profiled by Nsight Compute (bank conflicts as the hardware counts
# them), and two more reference grades (with the first, "three runs in a row").
# Usage (repository root, cuda preset built): OUT=DIR bash tools/device/h200-lab03-rest.sh
set -uo pipefail
export GPULAB_NO_INSTALL=1
out="${OUT:-$PWD/out}"
mkdir -p "$out"
nvcc -O3 -std=c++17 -arch=sm_90 tools/probes/transpose_variants.cu -o "$out/transpose_variants" > "$out/probe-build.log" 2>&1
timeout 120 "$out/transpose_variants" > "$out/transpose_variants.tsv" 2>&1; echo "transpose probe: exit $?"
metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,dram__bytes.sum,gpu__time_duration.sum
for f in solutions/03-bank-conflicts/steps/4_swizzled.cu; do
  name="$(basename "$f" .cu)"
  rm -rf build/cuda/handins
  GPULAB_KEEP_HANDINS=1 ./gpulab grade 03 --submission "$f" --json "$out/lab03-$name.json" > "$out/lab03-$name.txt" 2>&1
  echo "$name: exit $?"
  runner="$(ls -d build/cuda/handins/03-bank-conflicts-submission-*/runner 2>/dev/null | head -1)"
  if [[ -x "$runner" ]]; then
    timeout 240 ncu --metrics "$metrics" --kernel-name regex:'transpose' --launch-count 2 --csv \
      "$runner" --rubric grader/labs/03-bank-conflicts/rubric.ini --gtest_filter='performance.bandwidth_vs_copy' \
      > "$out/ncu-$name.csv" 2> "$out/ncu-$name.log"
    echo "ncu $name: exit $?"
  fi
done
# The reference's own runner under ncu too (the padded kernel), then two more grades.
timeout 240 ncu --metrics "$metrics" --kernel-name regex:'transpose' --launch-count 2 --csv \
  build/cuda/grader/labs/03-bank-conflicts/lab-03-bank-conflicts-solution --rubric grader/labs/03-bank-conflicts/rubric.ini \
  --gtest_filter='performance.bandwidth_vs_copy' > "$out/ncu-solution.csv" 2> "$out/ncu-solution.log"
echo "ncu solution: exit $?"
for i in 2 3; do
  ./gpulab grade 03 --impl solution --json "$out/lab03-solution-$i.json" > "$out/lab03-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
grep -hE "points|pass  perf|FAIL  perf" "$out"/lab03-*.txt | cut -c1-200
cat "$out/transpose_variants.tsv"

#!/usr/bin/env bash
# Lab 02's remaining GPU runs (after tools/device/h200-lab02.sh's grades): Nsight Compute's traffic
# metrics of the stub (AoS) and reference (SoA) runners on the timed checks, and the lab's verdict
# suite on cuda.
# Usage (repository root, cuda preset built): OUT=DIR bash tools/device/h200-lab02-rest.sh
set -uo pipefail
export GPULAB_NO_INSTALL=1
out="${OUT:-$PWD/out}"
mkdir -p "$out"
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
for impl in stub solution; do
  timeout 240 ncu --metrics "$metrics" --kernel-name regex:'distances|step' --launch-count 4 --csv \
    build/cuda/grader/labs/02-aos-soa/lab-02-aos-soa-$impl --rubric grader/labs/02-aos-soa/rubric.ini --gtest_filter='performance.*' \
    > "$out/ncu-$impl.csv" 2> "$out/ncu-$impl.log"
  echo "ncu $impl: exit $?"
done
build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*/02_*' > "$out/verdicts.log" 2>&1
echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED|  OK) " "$out/verdicts.log"

#!/usr/bin/env bash
# Lab 02 (AoS vs SoA) on the GPU machine: builds the cuda preset's lab-02 targets, grades the
# reference three times (the spread), the stub, and the hot/cold and thread-per-particle
# submissions (the intermediate versions that place the threshold), prints the calibration, and
# profiles the AoS and SoA kernels with Nsight Compute (DRAM and L2 traffic: the 4x-vs-3x
# question of the lesson). Logs go to $OUT (or ./out). Results: docs/results/lab02-h200.md (the
# queue's phases probe02, verdicts:02, calibrate02 and ncu02 do the same in one lease).
# Usage (from the repository root): bash docs/results/lab02-gpu.sh
set -uo pipefail
out="${OUT:-$PWD/out}"
mkdir -p "$out"
subs=grader/tests/submissions/02-aos-soa
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
cmake --preset cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" --target gpulab-grade lab-02-aos-soa-solution lab-02-aos-soa-stub grader_verdict_tests \
  > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
for i in 1 2 3; do
  ./gpulab grade 02 --impl solution --json "$out/lab02-solution-$i.json" > "$out/lab02-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
./gpulab grade 02 --submission "$subs/stub/aos_soa.cu" --json "$out/lab02-stub.json" > "$out/lab02-stub.txt" 2>&1
echo "stub: exit $?"
for s in hot_cold_split thread_per_particle_conversion scalar_component_loads; do
  ./gpulab grade 02 --submission "$subs/$s.cu" --json "$out/lab02-$s.json" > "$out/lab02-$s.txt" 2>&1
  echo "$s: exit $?"
done
./gpulab calibrate 02 > "$out/lab02-calibrate.txt" 2>&1
echo "calibrate: exit $?"
# DRAM vs L2 vs L1 traffic of the positions-only and all-fields kernels, AoS (stub) and SoA (reference).
metrics=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
for impl in stub solution; do
  timeout 240 ncu --metrics "$metrics" --kernel-name regex:'distances|step' --launch-count 4 --csv \
    build/cuda/grader/labs/02-aos-soa/lab-02-aos-soa-$impl --rubric grader/labs/02-aos-soa/rubric.ini --gtest_filter='performance.*' \
    > "$out/ncu-$impl.csv" 2> "$out/ncu-$impl.log"
  echo "ncu $impl: exit $?"
done
build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*02_aos_soa*' > "$out/verdicts.log" 2>&1
echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED) " "$out/verdicts.log"
cat "$out/gpu.csv"
grep -hE "PASSED|FAILED|pass  perf|FAIL  perf|of copy" "$out"/lab02-*.txt | head -40

#!/usr/bin/env bash
# Lab 05 (particle reorder) on the GPU machine: builds the cuda preset's lab-05 targets, grades the
# reference three times (the spread), the stub, and the intermediate versions that place the
# thresholds (reordered_27_cells: density over the reordered copy without merged rows;
# scatter_reorder: the reference with a scatter), prints the calibration, runs the lesson's
# probes (docs/results/probes/lab05_probes.cu: gather vs scatter, linear vs Morton, reorder every N
# frames, break-even, counting sort vs CUB), profiles the density kernels with Nsight Compute
# (L1/L2 hit rates and DRAM bytes: why the reordered loop is faster), and runs the lab's verdict
# suite. Logs go to $OUT (or ./out); a compact summary is printed at the end. What it fills:
# docs/results/lab05-h200.md (not yet run).
# Usage (from the repository root): GPULAB_NO_INSTALL=1 bash docs/results/lab05-gpu.sh
set -uo pipefail
export GPULAB_NO_INSTALL=1
out="${OUT:-$PWD/out}"
mkdir -p "$out"
subs=grader/tests/submissions/05-particle-reorder
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
cmake --preset cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" --target gpulab-grade lab-05-particle-reorder-solution lab-05-particle-reorder-stub \
  grader_verdict_tests > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
for i in 1 2 3; do
  ./gpulab grade 05 --impl solution --json "$out/lab05-solution-$i.json" > "$out/lab05-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
./gpulab grade 05 --submission "$subs/stub/particle_reorder.cu" --json "$out/lab05-stub.json" > "$out/lab05-stub.txt" 2>&1
echo "stub: exit $?"
for s in reordered_27_cells scatter_reorder; do
  ./gpulab grade 05 --submission "$subs/$s.cu" --json "$out/lab05-$s.json" > "$out/lab05-$s.txt" 2>&1
  echo "$s: exit $?"
done
./gpulab calibrate 05 > "$out/lab05-calibrate.txt" 2>&1
echo "calibrate: exit $?"
# The lesson's probes, built with nvcc from the lab's reference and the grader's baselines.
arch="$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '.')"
nvcc -std=c++17 -O3 -arch="sm_${arch:-90}" -lineinfo -Ilabs/05-particle-reorder -Icommon/include -Igrader/common \
  -o "$out/lab05_probes" docs/results/probes/lab05_probes.cu > "$out/probes-build.log" 2>&1 || { tail -20 "$out/probes-build.log"; }
for n in 2097152 262144; do
  "$out/lab05_probes" "$n" > "$out/probes-$n.tsv" 2> "$out/probes-$n.log"
  echo "probes n = $n: exit $?"
done
# Why the reordered loop is faster: hit rates and DRAM traffic of the three density kernels.
metrics=l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,gpu__time_duration.sum
ncu --metrics "$metrics" --kernel-name regex:'density' --csv "$out/lab05_probes" 2097152 once \
  > "$out/ncu-density.csv" 2> "$out/ncu-density.log"
echo "ncu density: exit $?"
if [[ "${GPULAB_VERDICTS:-1}" == 1 ]]; then
  build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*05_particle_reorder*' > "$out/verdicts.log" 2>&1
  echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED) " "$out/verdicts.log"
fi
echo "---- summary"
cat "$out/gpu.csv"
grep -hE "points|FAIL  perf|pass  perf|x faster|of the copy|CUB" "$out"/lab05-solution-1.txt "$out"/lab05-stub.txt \
  "$out"/lab05-reordered_27_cells.txt "$out"/lab05-scatter_reorder.txt 2>/dev/null | cut -c1-220 | head -40
grep -hE "suggest|min_" "$out/lab05-calibrate.txt" | head -10
cat "$out/probes-2097152.tsv"

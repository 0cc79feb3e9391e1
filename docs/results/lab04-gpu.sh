#!/usr/bin/env bash
# Lab 04 on the GPU machine: builds the cuda preset, grades the reference three times (the spread,
# and "passes three runs in a row"), the stub once, the intermediate step and the hidden
# single-block and chunk-per-thread submissions (their time / CUB's place the rubric thresholds),
# runs ./gpulab calibrate 04, the lesson's probes (32-lane code and the volatile tail on real
# warps; the run-to-run spread of atomics), Nsight Compute's metrics per version, and the lab's
# verdict tests. Logs and JSON go to $OUT (or ./out); a compact summary is printed at the end.
# Usage (from the repository root): GPULAB_NO_INSTALL=1 bash docs/results/lab04-gpu.sh
set -uo pipefail
export GPULAB_NO_INSTALL="${GPULAB_NO_INSTALL:-1}"
out="${OUT:-$PWD/out}"
mkdir -p "$out"
subs=grader/tests/submissions/04-reductions
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > "$out/gpu.csv" 2>&1
cmake --preset cuda > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build/cuda -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }

# 1. Grades: reference x3, stub, intermediate, hidden slow submissions.
for i in 1 2 3; do
  ./gpulab grade 04 --impl solution --json "$out/lab04-solution-$i.json" > "$out/lab04-solution-$i.txt" 2>&1
  echo "solution run $i: exit $?"
done
./gpulab grade 04 --json "$out/lab04-student.json" > "$out/lab04-student.txt" 2>&1
echo "student (stub): exit $?"
for f in solutions/04-reductions/steps/*.cu "$subs"/{single_block,chunk_per_thread}.cu; do
  name="$(basename "$f" .cu)"
  ./gpulab grade 04 --submission "$f" --json "$out/lab04-$name.json" > "$out/lab04-$name.txt" 2>&1
  echo "$name: exit $?"
done
./gpulab calibrate 04 > "$out/lab04-calibrate.txt" 2>&1
echo "calibrate: exit $?"

# 2. The lesson's probes on the GPU (a plain CUDA program, compiled here by nvcc).
nvcc -O3 -arch=sm_90 -std=c++17 solutions/04-reductions/tools/probe.cu -o "$out/probe" > "$out/probe-build.log" 2>&1
echo "probe build: exit $?"
if [[ -x "$out/probe" ]]; then
  "$out/probe" warp > "$out/probe-warp.tsv" 2>&1; echo "probe warp: exit $?"
  "$out/probe" determinism 268435456 100 > "$out/probe-determinism-2p28.tsv" 2>&1; echo "probe determinism 2^28: exit $?"
  "$out/probe" determinism 16777216 100 > "$out/probe-determinism-2p24.tsv" 2>&1; echo "probe determinism 2^24: exit $?"
fi

# 3. Nsight Compute per version, on its runner alone (not under the grader, whose sanitizer runs
#    would be profiled too): time, DRAM bytes, load sectors per request, shared wavefronts, grid
#    size, for the first reduce_* launches of the timed check (2^28 elements first).
metrics=gpu__time_duration.sum,dram__bytes_read.sum,launch__grid_size,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum
if command -v ncu >/dev/null 2>&1; then
  labdir=build/cuda/grader/labs/04-reductions
  for impl in stub solution step; do
    runner="$labdir/lab-04-reductions-$impl"
    if [[ "$impl" == step ]]; then
      rm -rf build/cuda/handins
      GPULAB_KEEP_HANDINS=1 ./gpulab grade 04 --submission solutions/04-reductions/steps/02_sequential_tree.cu --no-performance > /dev/null 2>&1
      runner="$(ls -d build/cuda/handins/04-reductions-submission-*/runner 2>/dev/null | head -1)"
    fi
    [[ -x "$runner" ]] || { echo "ncu $impl: no runner"; continue; }
    timeout 240 ncu --metrics "$metrics" -k regex:'reduce_' --launch-count 4 --csv \
      "$runner" --rubric grader/labs/04-reductions/rubric.ini --gtest_filter='performance.speed_vs_vendor' \
      > "$out/ncu-$impl.csv" 2> "$out/ncu-$impl.log"
    echo "ncu $impl: exit $?"
  done
fi

# 4. The verdict suite of this lab.
if [[ "${GPULAB_VERDICTS:-1}" == 1 ]]; then
  build/cuda/grader/tests/grader_verdict_tests --gtest_filter='*04_reductions*' > "$out/verdicts.log" 2>&1
  echo "verdicts: exit $?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$out/verdicts.log" | head -30
fi

# 5. Summary.
cat "$out/gpu.csv"
echo "--- grades (score, performance lines)"
for t in "$out"/lab04-*.txt; do
  echo "$(basename "$t" .txt): $(grep -oE '[0-9.]+ / [0-9.]+ points' "$t" | head -1)"
  grep -E "performance\.|n = [0-9]+: " "$t" | sed 's/^/    /' | head -6
done
echo "--- calibrate"; grep -iE "suggest|min_fraction" "$out/lab04-calibrate.txt" | head -10
echo "--- probes"; cat "$out/probe-warp.tsv" "$out/probe-determinism-2p28.tsv" "$out/probe-determinism-2p24.tsv" 2>/dev/null
echo "--- ncu (kernel, metric, value)"
for c in "$out"/ncu-*.csv; do
  echo "$(basename "$c")"; grep -E '^"' "$c" | awk -F'","' 'NR>1 {print "    " $5 "  " $(NF-2) " = " $NF}' | tr -d '"' | head -16
done

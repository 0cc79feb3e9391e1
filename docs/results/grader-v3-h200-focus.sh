#!/usr/bin/env bash
# The part of grader v3's H200 queue (grader-v3-h200.sh) that fits a short lease: the references
# of every lab, the timing defences (own stream, L2 persisting window) and the legitimate idioms
# not yet shown on the H200 (IDIOMS_DONE), in three lanes at once, logs written as they go.
# Usage (repository root, on the GPU machine): bash docs/results/grader-v3-h200-focus.sh LOGDIR
# Results page: docs/results/grader-v3-h200.md.
set -uo pipefail
logs="$(realpath -m "${1:-build/grader-v3-logs}")"; mkdir -p "$logs"
export GPULAB_NO_INSTALL=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$logs/gpu.txt"
t0=$(date +%s)
{ cmake --preset cuda && cmake --build build/cuda -j "$(nproc)"; } > "$logs/build.log" 2>&1 || { tail -30 "$logs/build.log"; exit 1; }
{ cmake --preset emu-gcc && cmake --build build/emu-gcc -j "$(nproc)" --target gpulab-grade; } >> "$logs/build.log" 2>&1 || exit 1
echo "built in $(( $(date +%s) - t0 )) s" > "$logs/queue.log"
(
  for lab in 01 02 03 04 05 06; do
    ./gpulab grade "$lab" --impl solution --json "$logs/ref$lab.json" > "$logs/ref$lab.txt" 2>&1
    echo "reference $lab: exit $? after $(( $(date +%s) - t0 )) s: $(grep -E 'Total:' "$logs/ref$lab.txt")"
  done
) > "$logs/refs.log" 2>&1 &
ctest --test-dir build/cuda -L adversarial -R "timed_work_on_own_stream|l2_persisting_window" -j 2 \
  --output-on-failure > "$logs/adversarial.log" 2>&1 &
ctest --test-dir build/cuda -L idioms ${IDIOMS_DONE:+-E "$IDIOMS_DONE"} -j 3 --output-on-failure > "$logs/idioms.log" 2>&1 &
wait
echo "done in $(( $(date +%s) - t0 )) s" >> "$logs/queue.log"

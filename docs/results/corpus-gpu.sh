#!/usr/bin/env bash
# The CUDA corpus (common/emu/tests/cuda-corpus) on the GPU machine: configures the cuda preset, builds the
# corpus programs only, runs each one, and writes to $OUT/corpus-h200/ every program's output,
# versions.txt (its VERSION lines) and summary.md (a table); the GPU's name and driver go to
# $OUT/corpus-h200/gpu.csv. Compare with an emulator run: common/emu/tests/cuda-corpus/corpus-compare.py.
# Usage (repository root): bash docs/results/corpus-gpu.sh
set -uo pipefail
export GPULAB_NO_INSTALL=1
out="${OUT:-$PWD/out}/corpus-h200"
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/gpu.csv" 2>&1
{ cmake --preset cuda && cmake --build build/cuda -j "$(nproc)" --target cuda-corpus; } > "$out/build.log" 2>&1 \
  || { grep -E "error|warning" "$out/build.log" | head -30; exit 1; }
if grep -q "warning" "$out/build.log"; then echo "build: warnings"; grep "warning" "$out/build.log" | head -20; fi
bash common/emu/tests/cuda-corpus/corpus-run.sh build/cuda "$out"
rc=$?
cat "$out/summary.md"
exit $rc

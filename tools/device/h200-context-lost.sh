#!/usr/bin/env bash
# A sticky GPU fault (misaligned float4 loads) on the GPU machine: the checks after it must say
# where the context was lost. Repository root; logs to $OUT.
export GPULAB_NO_INSTALL=1
out="${OUT:-$PWD/out}"; mkdir -p "$out"
{ cmake --preset cuda && cmake --build build/cuda -j "$(nproc)"; } > "$out/build-cuda.log" 2>&1 || { tail -30 "$out/build-cuda.log"; exit 1; }
{ cmake --preset emu-gcc && cmake --build build/emu-gcc -j "$(nproc)" --target gpulab-grade lab-01-coalescing-solution lab-01-coalescing-checks; } > "$out/build-emu.log" 2>&1 || { tail -30 "$out/build-emu.log"; exit 1; }
build/cuda/grader/gpulab-grade grade 01 --submission grader/tests/submissions/01-coalescing/float4_unaligned_rows.cu > "$out/float4.txt" 2>&1
grep -E "^  (pass|FAIL)|^        [a-z]|Total" "$out/float4.txt" | cut -c1-240 | head -40
timeout 200 ctest --test-dir build/cuda -R "Verdict.*float4" --output-on-failure > "$out/verdict.log" 2>&1
echo "verdict: $? :: $(grep -E 'tests passed|tests failed' "$out/verdict.log")"
